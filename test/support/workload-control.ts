// Switching a workload pod's behaviour from inside the node's network namespace: a node script
// for its control endpoint, run with the node's `namespace.exec`.
export { WORKLOAD_IMAGE } from "../../hack/images/images.js";

/** A node script: POST `body` as JSON to `url`; exits non-zero unless 200, saying why on stderr. */
export const postScript = (url: string, body: object): string => `
fetch(${JSON.stringify(url)}, { method: "POST", body: ${JSON.stringify(JSON.stringify(body))}, signal: AbortSignal.timeout(5000) })
  .then(async (r) => { if (r.status !== 200) { console.error(r.status, await r.text()); process.exit(1); } }, (err) => { console.error(err.message); process.exit(1); });
`;
