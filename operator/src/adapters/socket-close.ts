// How a probe's connection ends: with a reset (SO_LINGER 0) once it is up, as HAProxy's health
// checks do and the kubelet's probes do since Kubernetes 1.27 (kubernetes#115143). An orderly
// close leaves a socket in TIME_WAIT for a minute on one side for every probe, a pod server's
// included, and costs both kernels the FIN exchange; a probe has nothing left to say.
import type { Socket } from "node:net";

/** Closes a probe's plain TCP socket with a reset; a TLS socket, or one still connecting, is destroyed as usual. */
export function closeProbeSocket(socket: Socket, tls: boolean): void {
  // resetAndDestroy() on a socket still connecting would wait for the connection before closing.
  if (!tls && !socket.connecting && !socket.destroyed) socket.resetAndDestroy();
  else socket.destroy();
}
