{{/*
Name of the chart, or nameOverride. Kubernetes names are at most 63 characters (DNS label).
*/}}
{{- define "ratelimit-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Full name of the release's resources: fullnameOverride, else <release>-<chart> (just <release> when the release name
already contains the chart name), cut to 63 characters.
*/}}
{{- define "ratelimit-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{/*
A name derived from the full name with a suffix, still at most 63 characters: the full name is cut first so that
the suffix survives.
*/}}
{{- define "ratelimit-gateway.suffixedName" -}}
{{- $root := index . 0 }}
{{- $suffix := index . 1 }}
{{- printf "%s-%s" (include "ratelimit-gateway.fullname" $root | trunc (int (sub 62 (len $suffix))) | trimSuffix "-") $suffix }}
{{- end }}

{{/*
Chart name and version, for the helm.sh/chart label.
*/}}
{{- define "ratelimit-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/*
Labels of the gateway's resources.
*/}}
{{- define "ratelimit-gateway.labels" -}}
{{ include "ratelimit-gateway.selectorLabels" . }}
{{ include "ratelimit-gateway.commonLabels" . }}
app.kubernetes.io/component: gateway
{{- end }}

{{/*
Labels shared by every resource of the release besides the selector labels; the helm test pod has these and the
instance label only (with the name label the Service would send it requests).
*/}}
{{- define "ratelimit-gateway.commonLabels" -}}
helm.sh/chart: {{ include "ratelimit-gateway.chart" . }}
app.kubernetes.io/version: {{ (default .Chart.AppVersion .Values.image.tag) | trunc 63 | trimSuffix "-" | quote }}
app.kubernetes.io/part-of: ratelimit
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/*
Selector labels: never change them after the first install (a Deployment's selector is immutable).
*/}}
{{- define "ratelimit-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ratelimit-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{/*
Name of the ServiceAccount the pods run as.
*/}}
{{- define "ratelimit-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "ratelimit-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/*
An image reference: repository:tag, or repository:tag@digest when a digest is set.
Argument: a dict with repository, tag, digest.
*/}}
{{- define "ratelimit-gateway.imageRef" -}}
{{- $ref := printf "%s:%s" .repository .tag }}
{{- if .digest }}
{{- $ref = printf "%s@%s" $ref .digest }}
{{- end }}
{{- $ref }}
{{- end }}

{{/*
The gateway image.
*/}}
{{- define "ratelimit-gateway.image" -}}
{{- include "ratelimit-gateway.imageRef" (dict "repository" .Values.image.repository "tag" (default .Chart.AppVersion .Values.image.tag) "digest" .Values.image.digest) }}
{{- end }}

{{/*
Directory of the mounted configuration inside the container.
*/}}
{{- define "ratelimit-gateway.configDir" -}}
/etc/ratelimit-gateway/config
{{- end }}

{{/*
Directory of the mounted API key Secret inside the container.
*/}}
{{- define "ratelimit-gateway.secretsDir" -}}
/etc/ratelimit-gateway/secrets
{{- end }}

{{/*
Whether the Redis password comes from a Secret ("true" or empty).
*/}}
{{- define "ratelimit-gateway.redisAuth" -}}
{{- if or .Values.redis.auth.password .Values.redis.auth.existingSecret }}true{{ end }}
{{- end }}

{{/*
Name of the Secret holding the Redis password: the existing one, or the one this chart creates.
*/}}
{{- define "ratelimit-gateway.redisSecretName" -}}
{{- if .Values.redis.auth.existingSecret }}
{{- .Values.redis.auth.existingSecret }}
{{- else }}
{{- include "ratelimit-gateway.suffixedName" (list . "redis") }}
{{- end }}
{{- end }}

{{/*
Key of the Redis password in that Secret.
*/}}
{{- define "ratelimit-gateway.redisSecretKey" -}}
{{- if .Values.redis.auth.existingSecret }}
{{- .Values.redis.auth.existingSecretPasswordKey }}
{{- else }}redis-password{{ end }}
{{- end }}

{{/*
Whether static API keys are configured ("true" or empty).
*/}}
{{- define "ratelimit-gateway.apiKeys" -}}
{{- if or .Values.apiKeys.keys .Values.apiKeys.existingSecret }}true{{ end }}
{{- end }}

{{/*
Name of the Secret holding the API key document: the existing one, or the one this chart creates.
*/}}
{{- define "ratelimit-gateway.apiKeysSecretName" -}}
{{- if .Values.apiKeys.existingSecret }}
{{- .Values.apiKeys.existingSecret }}
{{- else }}
{{- include "ratelimit-gateway.suffixedName" (list . "api-keys") }}
{{- end }}
{{- end }}

{{/*
Key of the API key document in that Secret.
*/}}
{{- define "ratelimit-gateway.apiKeysSecretKey" -}}
{{- if .Values.apiKeys.existingSecret }}
{{- .Values.apiKeys.existingSecretKey }}
{{- else }}api-keys.yml{{ end }}
{{- end }}

{{/*
ratelimit.fallback.instances: the instance count each pod divides the limits by while Redis is down, until it has
learned the real count from Redis heartbeats. An explicit rateLimit.fallback.instances wins; with autoscaling it is
maxReplicas (the fallback can then only be stricter than the plan, never looser; see values.yaml); otherwise the
replica count (at least 1).
*/}}
{{- define "ratelimit-gateway.fallbackInstances" -}}
{{- if .Values.rateLimit.fallback.instances }}
{{- .Values.rateLimit.fallback.instances | int }}
{{- else if .Values.autoscaling.enabled }}
{{- .Values.autoscaling.maxReplicas | int }}
{{- else }}
{{- max 1 (.Values.replicaCount | int) }}
{{- end }}
{{- end }}

{{/*
Whether any route goes to the demo upstream built into the sample gateway ("true" or empty).
*/}}
{{- define "ratelimit-gateway.usesDemoUpstream" -}}
{{- if not .Values.upstreamUri }}
{{- range .Values.routes }}
{{- if not .uri }}true{{ end }}
{{- end }}
{{- end }}
{{- end }}

{{/*
A list of limits in the starter's shape. Argument: the list from values (capacity, refillTokens, refillPeriod, or
type: quota with limit and period; name, algorithm, scope, unit). Numbers go through int64: Helm reads YAML numbers
as floats, which would print 1e+06.
*/}}
{{- define "ratelimit-gateway.limits" -}}
{{- range . }}
{{- if eq (toString .type) "quota" }}
- type: "quota"
  limit: {{ .limit | int64 }}
  period: {{ .period | quote }}
{{- else }}
- capacity: {{ .capacity | int64 }}
  refill-tokens: {{ .refillTokens | int64 }}
  refill-period: {{ .refillPeriod | quote }}
{{- end }}
  {{- if .name }}
  name: {{ .name | quote }}
  {{- end }}
  {{- if .algorithm }}
  algorithm: {{ .algorithm | quote }}
  {{- end }}
  {{- if .scope }}
  scope: {{ .scope | quote }}
  {{- end }}
  {{- if .unit }}
  unit: {{ .unit | quote }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
A Gateway predicate or filter: a shortcut string as is, or { name, args }.
*/}}
{{- define "ratelimit-gateway.definition" -}}
{{- if kindIs "string" . }}
- {{ . | quote }}
{{- else }}
- name: {{ .name | quote }}
  {{- with .args }}
  args:
    {{- range $k, $v := . }}
    {{ $k | quote }}: {{ $v | toString | quote }}
    {{- end }}
  {{- end }}
{{- end }}
{{- end }}

{{/*
The API key document of the chart-created Secret: ratelimit.api-keys in YAML, each key in Spring's bracket form
("[key]") and JSON-quoted, so dots, slashes or '+' in a key survive property binding.
*/}}
{{- define "ratelimit-gateway.apiKeysDocument" -}}
ratelimit:
  api-keys:
    {{- range $key, $plan := .Values.apiKeys.keys }}
    {{ printf "[%s]" $key | toJson }}: {{ $plan | toString | toJson }}
    {{- end }}
{{ end }}
