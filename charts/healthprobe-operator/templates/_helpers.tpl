{{/* Chart name, truncated to the 63 characters a label value allows. */}}
{{- define "healthprobe-operator.name" -}}
{{- .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: the release name when it already contains the chart name. */}}
{{- define "healthprobe-operator.fullname" -}}
{{- if contains .Chart.Name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "healthprobe-operator.selectorLabels" -}}
app.kubernetes.io/name: {{ include "healthprobe-operator.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "healthprobe-operator.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{ include "healthprobe-operator.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: healthprobe-operator
{{- end }}

{{- define "healthprobe-operator.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "healthprobe-operator.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "healthprobe-operator.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* The webhook's Service, Secret and configuration names. */}}
{{- define "healthprobe-operator.webhookServiceName" -}}
{{- printf "%s-webhook" (include "healthprobe-operator.fullname" .) | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "healthprobe-operator.webhookSecretName" -}}
{{- default (printf "%s-webhook-cert" (include "healthprobe-operator.fullname" .)) .Values.webhook.secretName }}
{{- end }}

{{- define "healthprobe-operator.webhookConfigurationName" -}}
{{- include "healthprobe-operator.fullname" . }}
{{- end }}

{{/*
The watched namespaces, comma-separated; empty: every namespace. rbac.namespaces, or the one
namespace of the deprecated watchNamespace; both set is an error.
*/}}
{{- define "healthprobe-operator.watchedNamespaces" -}}
{{- if and .Values.watchNamespace .Values.rbac.namespaces }}
{{- fail "watchNamespace is deprecated and replaced by rbac.namespaces: set only rbac.namespaces (e.g. rbac.namespaces={shop,payments})" }}
{{- end }}
{{- join "," (default (compact (list .Values.watchNamespace)) .Values.rbac.namespaces) }}
{{- end }}
