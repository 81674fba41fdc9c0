{{/*
The gateway's complete Spring configuration, mounted as application.yml and named by SPRING_CONFIG_LOCATION, so the
application.yml packaged in the image (with its demo API keys) is not read at all. No credential is rendered here:
the Redis password comes from the SPRING_DATA_REDIS_PASSWORD environment variable (secretKeyRef) and API keys from a
mounted Secret imported below. A second YAML document carries extraConfig and overrides the first.
*/}}
{{- define "ratelimit-gateway.applicationYaml" -}}
{{- $v := .Values -}}
# Rendered by the {{ .Chart.Name }} chart {{ .Chart.Version }} for release {{ .Release.Name }}.
server:
  port: {{ $v.server.port | int }}
  shutdown: graceful

spring:
  application:
    name: {{ include "ratelimit-gateway.fullname" . | quote }}
  lifecycle:
    timeout-per-shutdown-phase: {{ $v.shutdown.timeoutPerShutdownPhase | quote }}
  {{- if include "ratelimit-gateway.apiKeys" . }}
  config:
    # The static API key map: a Secret, mounted as a file (never in this ConfigMap).
    import: {{ printf "file:%s/api-keys.yml" (include "ratelimit-gateway.secretsDir" .) | quote }}
  {{- end }}
  data:
    redis:
      {{- if eq $v.redis.mode "cluster" }}
      cluster:
        nodes:
          {{- range $v.redis.cluster.nodes }}
          - {{ . | quote }}
          {{- end }}
        max-redirects: {{ $v.redis.cluster.maxRedirects | int }}
      lettuce:
        cluster:
          refresh:
            adaptive: {{ $v.redis.cluster.adaptiveRefresh }}
            period: {{ $v.redis.cluster.refreshPeriod | quote }}
      {{- else }}
      host: {{ $v.redis.host | quote }}
      port: {{ $v.redis.port | int }}
      database: {{ $v.redis.database | int }}
      {{- end }}
      {{- with $v.redis.username }}
      username: {{ . | quote }}
      {{- end }}
      {{- if include "ratelimit-gateway.redisAuth" . }}
      # password: from the SPRING_DATA_REDIS_PASSWORD environment variable (Secret {{ include "ratelimit-gateway.redisSecretName" . }})
      {{- end }}
      ssl:
        enabled: {{ $v.redis.ssl }}
      timeout: {{ $v.redis.timeout | quote }}
      connect-timeout: {{ $v.redis.connectTimeout | quote }}
  cloud:
    gateway:
      server:
        webflux:
          routes:
            {{- range $v.routes }}
            - id: {{ .id | quote }}
              {{- if .uri }}
              uri: {{ .uri | quote }}
              {{- else if $v.upstreamUri }}
              uri: {{ $v.upstreamUri | quote }}
              {{- else }}
              # The demo upstream the sample gateway starts inside the pod (upstreamUri is empty).
              uri: "${sample.upstream-uri}"
              {{- end }}
              {{- if not (kindIs "invalid" .order) }}
              order: {{ .order | int }}
              {{- end }}
              predicates:
                {{- range .predicates }}
                {{- include "ratelimit-gateway.definition" . | trim | nindent 16 }}
                {{- end }}
              {{- if or (hasKey . "rateLimit") .filters }}
              filters:
                {{- if hasKey . "rateLimit" }}
                - name: RateLimit
                  {{- with .rateLimit }}
                  args:
                    {{- with .group }}
                    group: {{ . | quote }}
                    {{- end }}
                    {{- with .keyBy }}
                    key-by: {{ . | quote }}
                    {{- end }}
                    {{- if not (kindIs "invalid" .cost) }}
                    cost: {{ .cost | int64 | quote }}
                    {{- end }}
                    {{- if not (kindIs "invalid" .critical) }}
                    critical: {{ .critical | toString | quote }}
                    {{- end }}
                    {{- with .protect }}
                    protect: {{ . | quote }}
                    {{- end }}
                    {{- with .priority }}
                    priority: {{ . | quote }}
                    {{- end }}
                    {{- with .usage }}
                    usage: {{ . | quote }}
                    {{- end }}
                    {{- if kindIs "string" .reserve }}
                    reserve: {{ .reserve | quote }}
                    {{- else if not (kindIs "invalid" .reserve) }}
                    reserve: {{ .reserve | int64 | quote }}
                    {{- end }}
                    {{- if not (kindIs "invalid" .reserveMax) }}
                    reserve-max: {{ .reserveMax | int64 | quote }}
                    {{- end }}
                    {{- if kindIs "string" .countWhen }}
                    count-when: {{ .countWhen | quote }}
                    {{- else if not (kindIs "invalid" .countWhen) }}
                    count-when: {{ .countWhen | int64 | quote }}
                    {{- end }}
                  {{- end }}
                {{- end }}
                {{- range .filters }}
                {{- include "ratelimit-gateway.definition" . | trim | nindent 16 }}
                {{- end }}
              {{- end }}
              {{- with .metadata }}
              metadata:
                {{- toYaml . | nindent 16 }}
              {{- end }}
            {{- end }}
{{- if $v.upstreamUri }}

sample:
  # Routes without their own uri go here; the sample's built-in demo upstream is not started.
  upstream-uri: {{ $v.upstreamUri | quote }}
{{- end }}

ratelimit:
  api-key-header: {{ $v.rateLimit.apiKeyHeader | quote }}
  trusted-proxies: {{ $v.rateLimit.trustedProxies | int }}
  anonymous-plan: {{ $v.rateLimit.anonymousPlan | quote }}
  header-style: {{ $v.rateLimit.headerStyle | quote }}
  redis-timeout: {{ $v.rateLimit.redisTimeout | quote }}
  key-prefix: {{ $v.rateLimit.keyPrefix | quote }}
  non-canonical-paths: {{ $v.rateLimit.nonCanonicalPaths | quote }}
  plans:
    {{- range $name, $plan := $v.rateLimit.plans }}
    {{- if $plan }}
    {{ $name }}:
      {{- with $plan.quotaZone }}
      quota-zone: {{ . | quote }}
      {{- end }}
      {{- with $plan.priority }}
      priority: {{ . | quote }}
      {{- end }}
      default:
        {{- include "ratelimit-gateway.limits" $plan.default | trim | nindent 8 }}
      {{- with $plan.groups }}
      groups:
        {{- range $group, $limits := . }}
        {{- if $limits }}
        {{ $group }}:
          {{- include "ratelimit-gateway.limits" $limits | trim | nindent 10 }}
        {{- end }}
        {{- end }}
      {{- end }}
    {{- end }}
    {{- end }}
  {{- with $v.rateLimit.quota }}
  quota:
    {{- with .zone }}
    zone: {{ . | quote }}
    {{- end }}
    {{- with .firstDayOfWeek }}
    first-day-of-week: {{ . | quote }}
    {{- end }}
  {{- end }}
  {{- with $v.rateLimit.groups }}
  groups:
    {{- range $group, $settings := . }}
    {{- if $settings }}
    {{ $group }}:
      critical: {{ $settings.critical | default false }}
    {{- end }}
    {{- end }}
  {{- end }}
  {{- with $v.rateLimit.protections }}
  protections:
    {{- range $name, $protection := . }}
    {{- if not (kindIs "invalid" $protection) }}
    {{ $name }}:
      {{- if not $protection }}
      limit: "adaptive"
      {{- end }}
      {{- with $protection.limit }}
      limit: {{ . | quote }}
      {{- end }}
      {{- with $protection.algorithm }}
      algorithm: {{ . | quote }}
      {{- end }}
      {{- range $setting := list "min" "max" "initial" "maxInFlight" }}
      {{- if not (kindIs "invalid" (index $protection $setting)) }}
      {{ kebabcase $setting }}: {{ index $protection $setting | int64 }}
      {{- end }}
      {{- end }}
      {{- with $protection.retryAfter }}
      retry-after: {{ . | quote }}
      {{- end }}
      {{- if not (kindIs "invalid" $protection.shadow) }}
      shadow: {{ $protection.shadow }}
      {{- end }}
    {{- end }}
    {{- end }}
  {{- end }}
  {{- with $v.rateLimit.priorities }}
  priorities:
    {{- range $priority, $share := . }}
    {{- if $share }}
    {{ $priority }}: {{ $share | quote }}
    {{- end }}
    {{- end }}
  {{- end }}
  fallback:
    mode: {{ $v.rateLimit.fallback.mode | quote }}
    # Replicas sharing the limits, used until the count is learned from Redis heartbeats (see values.yaml).
    instances: {{ include "ratelimit-gateway.fallbackInstances" . }}
    learn-instances: {{ $v.rateLimit.fallback.learnInstances }}
    heartbeat-interval: {{ $v.rateLimit.fallback.heartbeatInterval | quote }}
    max-buckets: {{ $v.rateLimit.fallback.maxBuckets | int64 }}
  circuit-breaker:
    failure-rate-threshold: {{ $v.rateLimit.circuitBreaker.failureRateThreshold }}
    sliding-window-size: {{ $v.rateLimit.circuitBreaker.slidingWindowSize | int }}
    minimum-number-of-calls: {{ $v.rateLimit.circuitBreaker.minimumNumberOfCalls | int }}
    wait-duration-in-open-state: {{ $v.rateLimit.circuitBreaker.waitDurationInOpenState | quote }}
    permitted-calls-in-half-open-state: {{ $v.rateLimit.circuitBreaker.permittedCallsInHalfOpenState | int }}

management:
  server:
    # Actuator on its own port: probes and metrics, never exposed by the request Service port or the Ingress.
    port: {{ $v.management.port | int }}
  endpoints:
    web:
      exposure:
        include: {{ concat $v.management.exposure (ternary (list "prometheus") list $v.serviceMonitor.enabled) | uniq | join "," | quote }}
  endpoint:
    gateway:
      # Route listing only: no route creation, deletion or refresh over HTTP.
      access: read-only
    health:
      # /actuator/health/liveness and /actuator/health/readiness (the Kubernetes probes).
      probes:
        enabled: true
      show-components: always
      show-details: always
  health:
    # The gateway fails open by design: Redis being down must not take pods out of service. The starter's
    # rateLimiter component (always UP) reports where decisions come from.
    redis:
      enabled: false
{{- with $v.extraConfig }}
---
# extraConfig (overrides the document above)
{{ toYaml . }}
{{- end }}
{{- end }}
