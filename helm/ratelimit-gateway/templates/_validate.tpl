{{/*
Refuses to render values that contradict each other or would deploy a gateway that cannot work as intended. The
schema (values.schema.json) checks each value on its own; these checks relate several. Every message names the
value and the fix. Included from validate.yaml, so it runs for install, upgrade, template and lint.
*/}}
{{- define "ratelimit-gateway.validate" -}}
{{- $v := .Values }}
{{- $errors := list }}

{{- /* Replicas and autoscaling */}}
{{- if and $v.autoscaling.enabled (eq (int $v.replicaCount) 0) }}
{{- $errors = append $errors "replicaCount is 0 while autoscaling.enabled is true: an HPA never scales a Deployment up from 0 pods. Set replicaCount to at least 1, or autoscaling.enabled to false to stop the gateway." }}
{{- end }}
{{- if and $v.autoscaling.enabled (gt (int $v.autoscaling.minReplicas) (int $v.autoscaling.maxReplicas)) }}
{{- $errors = append $errors (printf "autoscaling.minReplicas (%d) is above autoscaling.maxReplicas (%d). Lower minReplicas or raise maxReplicas." (int $v.autoscaling.minReplicas) (int $v.autoscaling.maxReplicas)) }}
{{- end }}
{{- if and $v.autoscaling.enabled (not $v.autoscaling.targetCPUUtilizationPercentage) (not $v.autoscaling.targetMemoryUtilizationPercentage) }}
{{- $errors = append $errors "autoscaling.enabled is true but neither autoscaling.targetCPUUtilizationPercentage nor autoscaling.targetMemoryUtilizationPercentage is set: the HPA would have no metric. Set targetCPUUtilizationPercentage (e.g. 70)." }}
{{- end }}

{{- /* Disruption budget */}}
{{- if $v.podDisruptionBudget.enabled }}
{{- $pdb := $v.podDisruptionBudget }}
{{- if and (not (kindIs "invalid" $pdb.minAvailable)) (not (kindIs "invalid" $pdb.maxUnavailable)) }}
{{- $errors = append $errors "podDisruptionBudget: set minAvailable or maxUnavailable, not both (set the other to null)." }}
{{- else if and (kindIs "invalid" $pdb.minAvailable) (kindIs "invalid" $pdb.maxUnavailable) }}
{{- $errors = append $errors "podDisruptionBudget.enabled is true but minAvailable and maxUnavailable are both null. Set one, e.g. maxUnavailable: 1." }}
{{- end }}
{{- $fewest := ternary (int $v.autoscaling.minReplicas) (int $v.replicaCount) (eq $v.autoscaling.enabled true) }}
{{- if and (not (kindIs "invalid" $pdb.minAvailable)) (not (kindIs "string" $pdb.minAvailable)) }}
{{- if ge (int $pdb.minAvailable) $fewest }}
{{- $errors = append $errors (printf "podDisruptionBudget.minAvailable (%d) is not below the replica count (%d): no pod could ever be evicted, so node drains and cluster upgrades would hang. Lower minAvailable or use maxUnavailable: 1." (int $pdb.minAvailable) $fewest) }}
{{- end }}
{{- end }}
{{- if and (not (kindIs "invalid" $pdb.maxUnavailable)) (not (kindIs "string" $pdb.maxUnavailable)) (eq (int $pdb.maxUnavailable) 0) }}
{{- $errors = append $errors "podDisruptionBudget.maxUnavailable is 0: no pod could ever be evicted, so node drains and cluster upgrades would hang. Use at least 1." }}
{{- end }}
{{- end }}

{{- /* Ports */}}
{{- if eq (int $v.server.port) (int $v.management.port) }}
{{- $errors = append $errors (printf "management.port equals server.port (%d): the actuator endpoints would be reachable through the Service's request port and the Ingress. Use another port, e.g. 8081." (int $v.server.port)) }}
{{- end }}

{{- /* Redis */}}
{{- if eq $v.redis.mode "cluster" }}
{{- if not $v.redis.cluster.nodes }}
{{- $errors = append $errors "redis.mode is cluster but redis.cluster.nodes is empty. List a few of the cluster's nodes as host:port, e.g. [ redis-cluster-0.redis-cluster-headless:6379 ]." }}
{{- end }}
{{- else if not $v.redis.host }}
{{- $errors = append $errors "redis.mode is standalone but redis.host is empty. Set redis.host (and redis.port), or redis.mode: cluster with redis.cluster.nodes." }}
{{- end }}
{{- if and $v.redis.auth.password $v.redis.auth.existingSecret }}
{{- $errors = append $errors "redis.auth.password and redis.auth.existingSecret are both set. Keep one: existingSecret (preferred: the password never passes through Helm) or password (the chart creates a Secret)." }}
{{- end }}

{{- /* API keys */}}
{{- if and $v.apiKeys.keys $v.apiKeys.existingSecret }}
{{- $errors = append $errors "apiKeys.keys and apiKeys.existingSecret are both set. Keep one: existingSecret (preferred) or keys (the chart creates a Secret)." }}
{{- end }}
{{- range $key, $plan := $v.apiKeys.keys }}
{{- if not (hasKey $v.rateLimit.plans (toString $plan)) }}
{{- $errors = append $errors (printf "apiKeys.keys maps an API key to plan '%s', which rateLimit.plans does not define. Map it to one of %s." (toString $plan) (keys $v.rateLimit.plans | sortAlpha | join ", ")) }}
{{- end }}
{{- end }}

{{- /* Plans, groups and routes */}}
{{- if not (hasKey $v.rateLimit.plans $v.rateLimit.anonymousPlan) }}
{{- $errors = append $errors (printf "rateLimit.anonymousPlan is '%s', which rateLimit.plans does not define. Define the plan or name one of %s." $v.rateLimit.anonymousPlan (keys $v.rateLimit.plans | sortAlpha | join ", ")) }}
{{- end }}
{{- $groups := keys $v.rateLimit.groups }}
{{- $lists := list }}
{{- range $name, $plan := $v.rateLimit.plans }}
{{- if $plan }}
{{- $groups = concat $groups (keys (default dict $plan.groups)) }}
{{- $lists = append $lists (list (printf "rateLimit.plans.%s.default" $name) $plan.default) }}
{{- range $group, $limits := (default dict $plan.groups) }}
{{- $lists = append $lists (list (printf "rateLimit.plans.%s.groups.%s" $name $group) $limits) }}
{{- end }}
{{- end }}
{{- end }}
{{- range $lists }}
{{- $at := index . 0 }}
{{- range $i, $limit := index . 1 }}
{{- if and $limit.unit (ne $limit.unit "requests") (eq (toString $limit.algorithm) "sliding-window-log") }}
{{- $errors = append $errors (printf "%s[%d] counts '%s' with algorithm sliding-window-log, which keeps one Redis entry per token. Use token-bucket, fixed-window or sliding-window-counter." $at $i $limit.unit) }}
{{- end }}
{{- if eq (toString $limit.type) "quota" }}
{{- range $setting := list "capacity" "refillTokens" "refillPeriod" "algorithm" }}
{{- if hasKey $limit $setting }}
{{- $errors = append $errors (printf "%s[%d] is a quota (type: quota), which does not take %s. A quota is limit and period: remove %s, or put the rate in a limit of its own in the same list." $at $i $setting $setting) }}
{{- end }}
{{- end }}
{{- else }}
{{- range $setting := list "limit" "period" }}
{{- if hasKey $limit $setting }}
{{- $errors = append $errors (printf "%s[%d] sets %s, which only a quota takes. Make it a limit of its own with type: quota, limit and period, or remove %s." $at $i $setting $setting) }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- $ids := list }}
{{- range $i, $route := $v.routes }}
{{- if has $route.id $ids }}
{{- $errors = append $errors (printf "routes[%d].id '%s' is used by an earlier route too. Give every route its own id." $i $route.id) }}
{{- end }}
{{- $ids = append $ids $route.id }}
{{- if and (hasKey $route "rateLimit") $route.rateLimit $route.rateLimit.group }}
{{- if not (has $route.rateLimit.group $groups) }}
{{- $errors = append $errors (printf "routes[%d] (%s) names endpoint group '%s', which neither rateLimit.groups nor any plan's groups declares. Declare it (rateLimit.groups.%s.critical: false) or fix the name." $i $route.id $route.rateLimit.group $route.rateLimit.group) }}
{{- end }}
{{- end }}
{{- if hasKey $route "rateLimit" }}
{{- $rl := default dict $route.rateLimit }}
{{- if and $rl.protect (kindIs "invalid" (index (default dict $v.rateLimit.protections) $rl.protect)) }}
{{- $errors = append $errors (printf "routes[%d] (%s) names protection '%s', which rateLimit.protections does not define. Declare it (rateLimit.protections.%s: { limit: adaptive }) or fix the name." $i $route.id $rl.protect $rl.protect) }}
{{- end }}
{{- if and $rl.priority (not $rl.protect) }}
{{- $errors = append $errors (printf "routes[%d] (%s) sets rateLimit.priority without rateLimit.protect: a priority orders requests only in an upstream protection. Add protect or remove priority." $i $route.id) }}
{{- end }}
{{- $group := default $route.id $rl.group }}
{{- /* The limits that can apply, as the starter finds them: the group's list of each plan (only the anonymous plan
on keyBy ip routes), else the plan's default; the first one counting usage is named. */}}
{{- $counting := "" }}
{{- range $name, $plan := $v.rateLimit.plans }}
{{- if and $plan (or (ne (toString $rl.keyBy) "ip") (eq $name $v.rateLimit.anonymousPlan)) }}
{{- $limits := index (default dict $plan.groups) $group }}
{{- if not $limits }}
{{- $limits = $plan.default }}
{{- end }}
{{- range $limits }}
{{- if and (not $counting) .unit (ne .unit "requests") }}
{{- $counting = printf "'%s' in plan '%s'" .unit $name }}
{{- end }}
{{- end }}
{{- end }}
{{- end }}
{{- if and $counting (not $rl.usage) }}
{{- $errors = append $errors (printf "routes[%d] (%s) has no rateLimit.usage, but endpoint group '%s' counts %s, which only an answer tells. Set usage (json:<field path>, header:<response header> or bytes)." $i $route.id $group $counting) }}
{{- else if and $rl.usage (not $counting) }}
{{- $errors = append $errors (printf "routes[%d] (%s) sets rateLimit.usage, but no limit of endpoint group '%s' that can apply has a unit. Give the group's limits a unit (e.g. unit: tokens) or remove usage." $i $route.id $group) }}
{{- end }}
{{- $reserves := not (kindIs "invalid" $rl.reserve) }}
{{- if and (not $rl.usage) (or $reserves (not (kindIs "invalid" $rl.reserveMax))) }}
{{- $errors = append $errors (printf "routes[%d] (%s) sets rateLimit.%s, which applies only with usage. Set usage or remove it." $i $route.id (ternary "reserve" "reserveMax" $reserves)) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Upstream protections */}}
{{- range $name, $protection := (default dict $v.rateLimit.protections) }}
{{- if $protection }}
{{- if eq (toString $protection.limit) "fixed" }}
{{- if kindIs "invalid" $protection.maxInFlight }}
{{- $errors = append $errors (printf "rateLimit.protections.%s has limit: fixed but no maxInFlight. Set maxInFlight (requests in flight each pod lets through, e.g. 64), or use limit: adaptive." $name) }}
{{- end }}
{{- range $setting := list "algorithm" "min" "max" "initial" }}
{{- if hasKey $protection $setting }}
{{- $errors = append $errors (printf "rateLimit.protections.%s has limit: fixed, which does not take %s. Remove %s, or use limit: adaptive." $name $setting $setting) }}
{{- end }}
{{- end }}
{{- else if hasKey $protection "maxInFlight" }}
{{- $errors = append $errors (printf "rateLimit.protections.%s sets maxInFlight, which only limit: fixed takes. Set limit: fixed, or remove maxInFlight (an adaptive limit stays within min and max)." $name) }}
{{- end }}
{{- end }}
{{- end }}

{{- /* Client addresses behind an ingress controller */}}
{{- if and $v.ingress.enabled (eq (int $v.rateLimit.trustedProxies) 0) }}
{{- $errors = append $errors "ingress.enabled is true but rateLimit.trustedProxies is 0: every anonymous client would be limited as the ingress controller's own address, all sharing one bucket. Set rateLimit.trustedProxies to the number of proxies in front of the gateway (1 for one ingress controller)." }}
{{- end }}

{{- if $errors }}
{{- fail (printf "\n\nThe values of chart %s are invalid:\n  - %s\n" .Chart.Name (join "\n  - " $errors)) }}
{{- end }}
{{- end }}
