module healthprobe-operator/hack/images

go 1.26
