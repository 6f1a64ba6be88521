//go:build tools

// Package tools pins containerd 2.x for the real node mode: kubelet 1.36+ no longer supports
// containerd 1.x, so the distribution's containerd cannot serve it.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
)
