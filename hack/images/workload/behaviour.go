package main

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// HTTPAnswer is what an HTTP path answers, in the vocabulary of the test bed's process pod
// servers (status, body, delayMs), plus hang: accept the request and never answer.
type HTTPAnswer struct {
	Status  int    `json:"status"`
	Body    string `json:"body"`
	DelayMs int    `json:"delayMs,omitempty"`
	Hang    bool   `json:"hang,omitempty"`
}

// GRPCAnswer is what a health service name answers, as test/support/grpc-health-server.ts has it:
// a serving status, optionally after a delay, a hang, or a gRPC error code.
type GRPCAnswer struct {
	Status  string `json:"status,omitempty"`
	DelayMs int    `json:"afterMs,omitempty"`
	Hang    bool   `json:"hang,omitempty"`
	Error   *int   `json:"error,omitempty"`
}

// Request is one request or call a listener saw, headers (or gRPC metadata) included.
type Request struct {
	Listener string              `json:"listener"`
	Method   string              `json:"method,omitempty"`
	Path     string              `json:"path,omitempty"`
	Host     string              `json:"host,omitempty"`
	Headers  map[string][]string `json:"headers,omitempty"`
	Service  *string             `json:"service,omitempty"`
}

// maxRecorded bounds the request log: a long run probed every second keeps the newest.
const maxRecorded = 1000

var servingStatus = map[string]healthpb.HealthCheckResponse_ServingStatus{
	"UNKNOWN":         healthpb.HealthCheckResponse_UNKNOWN,
	"SERVING":         healthpb.HealthCheckResponse_SERVING,
	"NOT_SERVING":     healthpb.HealthCheckResponse_NOT_SERVING,
	"SERVICE_UNKNOWN": healthpb.HealthCheckResponse_SERVICE_UNKNOWN,
}

// Behaviour is the pod's switchable state, shared by its listeners and the control endpoint.
type Behaviour struct {
	mu       sync.Mutex
	http     HTTPAnswer
	paths    map[string]HTTPAnswer
	grpc     map[string]GRPCAnswer
	hits     map[string]int
	requests []Request
}

func NewBehaviour() *Behaviour {
	b := &Behaviour{}
	b.Reset()
	return b
}

// Reset returns to a healthy pod: 200 "ok", the overall gRPC health SERVING, nothing recorded.
func (b *Behaviour) Reset() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.http = HTTPAnswer{Status: 200, Body: "ok"}
	b.paths = map[string]HTTPAnswer{}
	b.grpc = map[string]GRPCAnswer{"": {Status: "SERVING"}}
	b.hits = map[string]int{}
	b.requests = nil
}

func (a HTTPAnswer) validate() error {
	if a.Status < 100 || a.Status > 999 {
		return fmt.Errorf("field status: %d is not an HTTP status", a.Status)
	}
	if a.DelayMs < 0 {
		return fmt.Errorf("field delayMs: %d is negative", a.DelayMs)
	}
	return nil
}

func (a GRPCAnswer) validate() error {
	switch {
	case a.Hang:
		return nil
	case a.Error != nil:
		if *a.Error < 1 || *a.Error > 16 {
			return fmt.Errorf("field error: %d is not a gRPC error code (1-16)", *a.Error)
		}
		return nil
	case a.DelayMs < 0:
		return fmt.Errorf("field afterMs: %d is negative", a.DelayMs)
	}
	if _, ok := servingStatus[a.Status]; !ok {
		return fmt.Errorf("field status: %q is not SERVING, NOT_SERVING, UNKNOWN or SERVICE_UNKNOWN", a.Status)
	}
	return nil
}

// SetHTTP sets the answer of one path, or of every path but those set on their own when path is "".
func (b *Behaviour) SetHTTP(path string, a HTTPAnswer) error {
	if err := a.validate(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if path == "" {
		b.http = a
	} else {
		b.paths[path] = a
	}
	return nil
}

func (b *Behaviour) SetGRPC(service string, a GRPCAnswer) error {
	if err := a.validate(); err != nil {
		return err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.grpc[service] = a
	return nil
}

// HTTPFor is the answer for a path; ok is false for "/" left unset, which echoes the pod name.
func (b *Behaviour) HTTPFor(path string) (HTTPAnswer, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a, ok := b.paths[path]; ok {
		return a, true
	}
	return b.http, path != "/"
}

// GRPCFor is a service's answer; a service never set fails with NOT_FOUND, as the reference health server does.
func (b *Behaviour) GRPCFor(service string) GRPCAnswer {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a, ok := b.grpc[service]; ok {
		return a
	}
	notFound := int(codes.NotFound)
	return GRPCAnswer{Error: &notFound}
}

func (b *Behaviour) Record(r Request) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hits[r.Listener]++
	b.requests = append(b.requests, r)
	if len(b.requests) > maxRecorded {
		b.requests = b.requests[len(b.requests)-maxRecorded:]
	}
}

func (b *Behaviour) Hits() map[string]int {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := map[string]int{"http": b.hits["http"], "tcp": b.hits["tcp"], "grpc": b.hits["grpc"]}
	return out
}

func (b *Behaviour) Requests() []Request {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Request(nil), b.requests...)
}

func (b *Behaviour) ClearRequests() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests = nil
}

// State is what GET / on the control endpoint shows.
func (b *Behaviour) State() map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	paths := map[string]HTTPAnswer{}
	for k, v := range b.paths {
		paths[k] = v
	}
	grpc := map[string]GRPCAnswer{}
	for k, v := range b.grpc {
		grpc[k] = v
	}
	return map[string]any{"http": b.http, "paths": paths, "grpc": grpc}
}

// wait sleeps for ms, or until the request is given up; false when it was.
func wait(r *http.Request, ms int) bool {
	if ms <= 0 {
		return true
	}
	t := time.NewTimer(time.Duration(ms) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	}
}
