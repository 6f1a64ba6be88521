package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/status"
)

func startTest(t *testing.T) *App {
	t.Helper()
	app, err := start(config{pod: "pod-a", bind: "127.0.0.1"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(app.Stop)
	return app
}

func post(t *testing.T, app *App, path, body string) (int, string) {
	t.Helper()
	res, err := http.Post("http://"+app.Control.Addr().String()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func get(t *testing.T, client *http.Client, url string, header http.Header) (int, string, error) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header = header
	res, err := client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b), nil
}

func healthCheck(t *testing.T, app *App, service string) (healthpb.HealthCheckResponse_ServingStatus, codes.Code) {
	t.Helper()
	conn, err := grpc.NewClient(app.Listeners["grpc"].address(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: service})
	return res.GetStatus(), status.Code(err)
}

func TestHTTPAnswersSwitchAtRunTime(t *testing.T) {
	app := startTest(t)
	base := "http://" + app.Listeners["http"].address()
	client := &http.Client{Timeout: 300 * time.Millisecond}
	cases := []struct {
		name, control, path string
		wantStatus          int
		wantBody            string
		wantTimeout         bool
	}{
		{"a fresh pod answers its health path 200 ok", ``, "/healthz", 200, "ok", false},
		{"/ echoes the pod name", ``, "/", 200, "pod-a\n", false},
		{"a status and body set for every path are answered", `{"status":503,"body":"down"}`, "/healthz", 503, "down", false},
		{"/ still echoes the pod name then", ``, "/", 200, "pod-a\n", false},
		{"one path can answer on its own", `{"status":204,"body":"","path":"/ready"}`, "/ready", 204, "", false},
		{"a hanging pod accepts and never answers", `{"status":200,"hang":true}`, "/healthz", 0, "", true},
		{"a delay longer than the client waits times out", `{"status":200,"delayMs":5000}`, "/healthz", 0, "", true},
		{"a short delay answers", `{"status":200,"body":"late","delayMs":10}`, "/healthz", 200, "late", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.control != "" {
				if code, body := post(t, app, "/set", c.control); code != 200 {
					t.Fatalf("set: %d %s", code, body)
				}
			}
			code, body, err := get(t, client, base+c.path, http.Header{})
			if c.wantTimeout {
				if err == nil {
					t.Fatalf("want a timeout, got %d %q", code, body)
				}
				return
			}
			if err != nil || code != c.wantStatus || body != c.wantBody {
				t.Fatalf("got %d %q %v, want %d %q", code, body, err, c.wantStatus, c.wantBody)
			}
		})
	}
}

func TestGRPCHealthSwitchesAtRunTime(t *testing.T) {
	app := startTest(t)
	cases := []struct {
		name, control, service string
		want                   healthpb.HealthCheckResponse_ServingStatus
		wantCode               codes.Code
	}{
		{"the overall health starts SERVING", ``, "", healthpb.HealthCheckResponse_SERVING, codes.OK},
		{"a service never set is NOT_FOUND", ``, "db", 0, codes.NotFound},
		{"NOT_SERVING is answered once set", `{"service":"","status":"NOT_SERVING"}`, "", healthpb.HealthCheckResponse_NOT_SERVING, codes.OK},
		{"UNKNOWN is answered once set", `{"service":"db","status":"UNKNOWN"}`, "db", healthpb.HealthCheckResponse_UNKNOWN, codes.OK},
		{"an error code fails the call", `{"service":"","error":14}`, "", 0, codes.Unavailable},
		{"a hang runs into the caller's deadline", `{"service":"","hang":true}`, "", 0, codes.DeadlineExceeded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.control != "" {
				if code, body := post(t, app, "/grpc", c.control); code != 200 {
					t.Fatalf("grpc: %d %s", code, body)
				}
			}
			got, code := healthCheck(t, app, c.service)
			if got != c.want || code != c.wantCode {
				t.Fatalf("got %v %v, want %v %v", got, code, c.want, c.wantCode)
			}
		})
	}
}

func TestRefuseClosesTheListenerAndListenReopensIt(t *testing.T) {
	app := startTest(t)
	for _, name := range []string{"http", "tcp", "grpc"} {
		addr := app.Listeners[name].address()
		if code, body := post(t, app, "/close", `{"listener":"`+name+`"}`); code != 200 {
			t.Fatalf("close %s: %d %s", name, code, body)
		}
		if conn, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			conn.Close()
			t.Fatalf("%s: connected to %s after close", name, addr)
		}
		post(t, app, "/listen", `{"listener":"`+name+`"}`)
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatalf("%s: %v after listen", name, err)
		}
		conn.Close()
	}
}

func TestEveryHeaderAndMetadataIsRecorded(t *testing.T) {
	app := startTest(t)
	client := &http.Client{Timeout: time.Second}
	_, _, err := get(t, client, "http://"+app.Listeners["http"].address()+"/healthz", http.Header{"X-Tenant": {"team-a"}, "Authorization": {"Bearer t"}})
	if err != nil {
		t.Fatal(err)
	}
	healthCheck(t, app, "")
	res, err := http.Get("http://" + app.Control.Addr().String() + "/requests")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var seen []Request
	if err := json.NewDecoder(res.Body).Decode(&seen); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2 || seen[0].Headers["X-Tenant"][0] != "team-a" || seen[0].Headers["Authorization"][0] != "Bearer t" || seen[0].Path != "/healthz" {
		t.Fatalf("http request not recorded with its headers: %+v", seen)
	}
	if seen[1].Listener != "grpc" || len(seen[1].Headers["user-agent"]) == 0 || *seen[1].Service != "" {
		t.Fatalf("grpc call not recorded with its metadata: %+v", seen[1])
	}
}

func TestBadControlInputNamesTheField(t *testing.T) {
	app := startTest(t)
	cases := []struct{ path, body, want string }{
		{"/set", `{"status":42}`, "field status"},
		{"/set", `{"status":200,"delayMs":-1}`, "field delayMs"},
		{"/grpc", `{"status":"HEALTHY"}`, "field status"},
		{"/grpc", `{"error":99}`, "field error"},
		{"/close", `{"listener":"udp"}`, "field listener"},
		{"/set", `{"code":200}`, `unknown field \"code\"`},
	}
	for _, c := range cases {
		code, body := post(t, app, c.path, c.body)
		if code != 400 || !bytes.Contains([]byte(body), []byte(c.want)) {
			t.Errorf("%s %s: got %d %s, want 400 naming %s", c.path, c.body, code, body, c.want)
		}
	}
}

func TestPortsComeFromFlagsOrEnvironment(t *testing.T) {
	t.Setenv("HTTP_PORT", "18080")
	t.Setenv("POD_NAME", "from-env")
	c, err := parseConfig([]string{"-grpc-port", "19090"})
	if err != nil || c.httpPort != 18080 || c.grpcPort != 19090 || c.pod != "from-env" || c.ctlPort != 9901 {
		t.Fatalf("got %+v %v", c, err)
	}
	if _, err := parseConfig([]string{"-tcp-port", "70000"}); err == nil || !strings.Contains(err.Error(), "flag -tcp-port (env TCP_PORT)") {
		t.Fatalf("want an error naming the flag, got %v", err)
	}
}
