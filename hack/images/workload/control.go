package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// control is the pod's control endpoint (a port of its own, never probed):
//
//	GET    /          the pod name, listeners, behaviour and hits
//	POST   /set       {"status":503,"body":"x","delayMs":0,"hang":false,"path":"/healthz"}  path optional
//	POST   /grpc      {"service":"","status":"NOT_SERVING"} | {"service":"","hang":true} |
//	                  {"service":"","status":"SERVING","afterMs":2000} | {"service":"","error":14}
//	POST   /close     {"listener":"http"|"tcp"|"grpc"}  refuse: stop listening (all three when omitted)
//	POST   /listen    {"listener":"http"|"tcp"|"grpc"}  listen again (all three when omitted)
//	GET    /hits      {"http":N,"tcp":N,"grpc":N}
//	GET    /requests  every request and call seen, headers and gRPC metadata included (the newest 1000)
//	DELETE /requests  forget them
//	POST   /reset     healthy again: 200 "ok", SERVING, every listener open, nothing recorded
func control(pod string, b *Behaviour, listeners map[string]*listener) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		open := map[string]any{}
		for name, l := range listeners {
			l.mu.Lock()
			open[name] = map[string]any{"address": l.addr, "open": l.stop != nil}
			l.mu.Unlock()
		}
		reply(w, map[string]any{"pod": pod, "listeners": open, "behaviour": b.State(), "hits": b.Hits()})
	})
	mux.HandleFunc("POST /set", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			HTTPAnswer
			Path string `json:"path"`
		}
		if decode(w, r, &body) {
			check(w, b.SetHTTP(body.Path, body.HTTPAnswer))
		}
	})
	mux.HandleFunc("POST /grpc", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			GRPCAnswer
			Service string `json:"service"`
		}
		if decode(w, r, &body) {
			check(w, b.SetGRPC(body.Service, body.GRPCAnswer))
		}
	})
	mux.HandleFunc("POST /close", func(w http.ResponseWriter, r *http.Request) {
		each(w, r, listeners, func(l *listener) error { l.close(); return nil })
	})
	mux.HandleFunc("POST /listen", func(w http.ResponseWriter, r *http.Request) {
		each(w, r, listeners, (*listener).open)
	})
	mux.HandleFunc("GET /hits", func(w http.ResponseWriter, r *http.Request) { reply(w, b.Hits()) })
	mux.HandleFunc("GET /requests", func(w http.ResponseWriter, r *http.Request) { reply(w, b.Requests()) })
	mux.HandleFunc("DELETE /requests", func(w http.ResponseWriter, r *http.Request) {
		b.ClearRequests()
		reply(w, map[string]any{})
	})
	mux.HandleFunc("POST /reset", func(w http.ResponseWriter, r *http.Request) {
		b.Reset()
		for _, l := range listeners {
			if err := l.open(); err != nil {
				check(w, err)
				return
			}
		}
		reply(w, map[string]any{})
	})
	return mux
}

func each(w http.ResponseWriter, r *http.Request, listeners map[string]*listener, do func(*listener) error) {
	var body struct {
		Listener string `json:"listener"`
	}
	if !decode(w, r, &body) {
		return
	}
	chosen := []*listener{listeners["http"], listeners["tcp"], listeners["grpc"]}
	if body.Listener != "" {
		l, ok := listeners[body.Listener]
		if !ok {
			check(w, fmt.Errorf("field listener: %q is not http, tcp or grpc", body.Listener))
			return
		}
		chosen = []*listener{l}
	}
	for _, l := range chosen {
		if err := do(l); err != nil {
			check(w, err)
			return
		}
	}
	reply(w, map[string]any{})
}

// decode reads a JSON body (an empty one is {}); unknown fields are refused by name.
func decode(w http.ResponseWriter, r *http.Request, into any) bool {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, 1<<16)); err != nil {
		check(w, fmt.Errorf("body: %w", err))
		return false
	}
	if buf.Len() == 0 {
		return true
	}
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		check(w, fmt.Errorf("body: %w", err))
		return false
	}
	return true
}

func check(w http.ResponseWriter, err error) {
	if err == nil {
		reply(w, map[string]any{})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
}

func reply(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
