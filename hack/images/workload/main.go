// Command workload is the test pods' server in the test node's image
// localhost/healthprobe-test/workload:1. It answers HTTP on every path (the health path and
// the rest: 200 "ok" until told otherwise; "/" echoes the pod name), TCP (writes the pod name
// and closes) and gRPC grpc.health.v1.Health/Check (the overall health "" SERVING), and its
// behaviour is switched at run time through a control endpoint on a port of its own (see
// control.go), in the vocabulary of the process pod servers, so tests can use either. It records
// every request's headers and every call's metadata for the control endpoint to show.
//
// Flags, each with an environment default: -pod-name (POD_NAME, from the downward API),
// -http-port (HTTP_PORT, 8080), -tcp-port (TCP_PORT, 9000), -grpc-port (GRPC_PORT, 9090),
// -control-port (CONTROL_PORT, 9901), -bind (BIND_ADDRESS, all addresses).
package main

import (
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"
)

type config struct {
	pod                                  string
	bind                                 string
	httpPort, tcpPort, grpcPort, ctlPort int
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

func parseConfig(args []string) (config, error) {
	fs := flag.NewFlagSet("workload", flag.ContinueOnError)
	c := config{}
	fs.StringVar(&c.pod, "pod-name", envOr("POD_NAME", "unnamed"), "the pod's name, echoed by / (env POD_NAME)")
	fs.StringVar(&c.bind, "bind", envOr("BIND_ADDRESS", ""), "the address to listen on (env BIND_ADDRESS)")
	ports := []struct {
		into           *int
		flag, env, def string
	}{
		{&c.httpPort, "http-port", "HTTP_PORT", "8080"},
		{&c.tcpPort, "tcp-port", "TCP_PORT", "9000"},
		{&c.grpcPort, "grpc-port", "GRPC_PORT", "9090"},
		{&c.ctlPort, "control-port", "CONTROL_PORT", "9901"},
	}
	raw := make([]*string, len(ports))
	for i, p := range ports {
		raw[i] = fs.String(p.flag, envOr(p.env, p.def), fmt.Sprintf("port (env %s)", p.env))
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	for i, p := range ports {
		n, err := strconv.Atoi(*raw[i])
		if err != nil || n < 0 || n > 65535 {
			return c, fmt.Errorf("flag -%s (env %s): %q is not a port", p.flag, p.env, *raw[i])
		}
		*p.into = n
	}
	return c, nil
}

// App is the running pod server: its listeners and its control endpoint.
type App struct {
	Behaviour *Behaviour
	Listeners map[string]*listener
	Control   net.Listener
	control   *http.Server
}

func start(c config) (*App, error) {
	b := NewBehaviour()
	addr := func(port int) string { return net.JoinHostPort(c.bind, strconv.Itoa(port)) }
	ls := map[string]*listener{
		"http": {name: "http", addr: addr(c.httpPort), serve: httpServe(c.pod, b)},
		"tcp":  {name: "tcp", addr: addr(c.tcpPort), serve: tcpServe(c.pod, b)},
		"grpc": {name: "grpc", addr: addr(c.grpcPort), serve: grpcServe(b)},
	}
	app := &App{Behaviour: b, Listeners: ls}
	for _, l := range ls {
		if err := l.open(); err != nil {
			app.Stop()
			return nil, err
		}
	}
	ctl, err := net.Listen("tcp", addr(c.ctlPort))
	if err != nil {
		app.Stop()
		return nil, fmt.Errorf("control listener: %w", err)
	}
	app.Control = ctl
	app.control = &http.Server{Handler: control(c.pod, b, ls), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = app.control.Serve(ctl) }()
	return app, nil
}

func (a *App) Stop() {
	for _, l := range a.Listeners {
		l.close()
	}
	if a.control != nil {
		_ = a.control.Close()
	}
}

func main() {
	c, err := parseConfig(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(2)
	}
	app, err := start(c)
	if err != nil {
		fmt.Fprintln(os.Stderr, "workload:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "workload: pod %s: http %s, tcp %s, grpc %s, control %s\n", c.pod,
		app.Listeners["http"].address(), app.Listeners["tcp"].address(), app.Listeners["grpc"].address(), app.Control.Addr())
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGINT, syscall.SIGTERM)
	<-signals
	app.Stop()
}
