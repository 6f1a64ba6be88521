//go:build tools

// Package tools pins the node binaries (kubelet, kube-proxy, kube-scheduler) in a module of their own, so the
// control plane's go.mod and go.sum, and with them its build cache key, stay as they are.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-proxy"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
	_ "k8s.io/kubernetes/cmd/kubelet"
)
