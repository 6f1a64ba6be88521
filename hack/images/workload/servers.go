package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
)

// listener is one of the pod's serving ports, which the control endpoint can close (refuse:
// connections are then refused) and open again on the same address.
type listener struct {
	name  string
	addr  string
	serve func(net.Listener) (stop func())

	mu   sync.Mutex
	stop func()
}

func (l *listener) open() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		return nil
	}
	ln, err := net.Listen("tcp", l.addr)
	if err != nil {
		return fmt.Errorf("%s listener on %s: %w", l.name, l.addr, err)
	}
	// Port 0 (the tests) becomes the bound port, so a reopen comes back where clients look.
	l.addr = ln.Addr().String()
	l.stop = l.serve(ln)
	return nil
}

func (l *listener) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.stop != nil {
		l.stop()
		l.stop = nil
	}
}

func (l *listener) address() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.addr
}

func httpServe(pod string, b *Behaviour) func(net.Listener) func() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.Record(Request{Listener: "http", Method: r.Method, Path: r.URL.Path, Host: r.Host, Headers: r.Header.Clone()})
		answer, set := b.HTTPFor(r.URL.Path)
		if !set {
			answer = HTTPAnswer{Status: 200, Body: pod + "\n"}
		}
		if answer.Hang {
			<-r.Context().Done()
			return
		}
		if !wait(r, answer.DelayMs) {
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("X-Pod-Name", pod)
		w.WriteHeader(answer.Status)
		if r.Method != http.MethodHead {
			_, _ = w.Write([]byte(answer.Body))
		}
	})
	return func(ln net.Listener) func() {
		srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		// Close, not Shutdown: a refusing pod drops its open connections too, hung ones included.
		return func() { _ = srv.Close() }
	}
}

// tcpServe accepts, writes the pod name and closes: a TCP probe only needs the connection.
func tcpServe(pod string, b *Behaviour) func(net.Listener) func() {
	return func(ln net.Listener) func() {
		go func() {
			for {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				b.Record(Request{Listener: "tcp", Host: conn.RemoteAddr().String()})
				_, _ = conn.Write([]byte(pod + "\n"))
				_ = conn.Close()
			}
		}()
		return func() { _ = ln.Close() }
	}
}

type healthServer struct {
	healthpb.UnimplementedHealthServer
	b *Behaviour
}

func (h *healthServer) Check(ctx context.Context, req *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	md, _ := metadata.FromIncomingContext(ctx)
	service := req.GetService()
	authority := ""
	if v := md.Get(":authority"); len(v) > 0 {
		authority = v[0]
	}
	h.b.Record(Request{Listener: "grpc", Method: "/grpc.health.v1.Health/Check", Host: authority, Headers: map[string][]string(md.Copy()), Service: &service})
	answer := h.b.GRPCFor(service)
	if answer.Hang {
		<-ctx.Done()
		return nil, status.FromContextError(ctx.Err()).Err()
	}
	if answer.Error != nil {
		return nil, status.Error(codes.Code(*answer.Error), "as the control endpoint set")
	}
	if answer.DelayMs > 0 {
		select {
		case <-time.After(time.Duration(answer.DelayMs) * time.Millisecond):
		case <-ctx.Done():
			return nil, status.FromContextError(ctx.Err()).Err()
		}
	}
	return &healthpb.HealthCheckResponse{Status: servingStatus[answer.Status]}, nil
}

func grpcServe(b *Behaviour) func(net.Listener) func() {
	return func(ln net.Listener) func() {
		srv := grpc.NewServer()
		healthpb.RegisterHealthServer(srv, &healthServer{b: b})
		go func() { _ = srv.Serve(ln) }()
		return srv.Stop
	}
}
