{{/* Chart name, truncated to 63 characters. */}}
{{- define "colline.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Full name: release-chart unless the release name already contains the chart name. */}}
{{- define "colline.fullname" -}}
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

{{- define "colline.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "colline.labels" -}}
helm.sh/chart: {{ include "colline.chart" . }}
{{ include "colline.selectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/component: consumer
app.kubernetes.io/part-of: colline
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{- define "colline.selectorLabels" -}}
app.kubernetes.io/name: {{ include "colline.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "colline.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "colline.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{/* Whether the chart renders its own Secret. */}}
{{- define "colline.createSecret" -}}
{{- if and .Values.secret.create (not .Values.secret.existingSecret) (or .Values.secret.neo4jPassword .Values.secret.kafkaSaslPassword .Values.secret.openlineageApiKey .Values.secret.openlineageEmitApiKey .Values.secret.extraEnv) }}true{{ end }}
{{- end }}

{{/* The Secret passed with envFrom, if any. */}}
{{- define "colline.secretName" -}}
{{- if .Values.secret.existingSecret }}
{{- .Values.secret.existingSecret }}
{{- else if include "colline.createSecret" . }}
{{- include "colline.fullname" . }}
{{- end }}
{{- end }}

{{- define "colline.image" -}}
{{- if .Values.image.digest }}
{{- printf "%s@%s" .Values.image.repository .Values.image.digest }}
{{- else }}
{{- printf "%s:%s" .Values.image.repository (.Values.image.tag | default .Chart.AppVersion) }}
{{- end }}
{{- end }}

{{/* The job label of the scrape target, for the alert rules. */}}
{{- define "colline.job" -}}
{{- .Values.metrics.prometheusRule.job | default (printf "%s-metrics" (include "colline.fullname" .)) }}
{{- end }}

{{/* Fails on contradictory or missing values; included by the Deployment. */}}
{{- define "colline.validate" -}}
{{- if not .Values.config.kafka.brokers }}
{{- fail "config.kafka.brokers is required: the Kafka bootstrap servers, e.g. [kafka-0.kafka:9092]" }}
{{- end }}
{{- if not .Values.config.neo4j.uri }}
{{- fail "config.neo4j.uri is required, e.g. neo4j://neo4j.neo4j.svc:7687" }}
{{- end }}
{{- if and .Values.secret.existingSecret .Values.secret.neo4jPassword }}
{{- fail "only one of secret.existingSecret and secret.neo4jPassword may be set" }}
{{- end }}
{{- if and (not .Values.config.neo4j.user) .Values.secret.neo4jPassword }}
{{- fail "secret.neo4jPassword is set but config.neo4j.user is empty" }}
{{- end }}
{{- if and .Values.config.neo4j.user (not .Values.secret.existingSecret) (not .Values.secret.neo4jPassword) }}
{{- fail "secret.neo4jPassword is required when config.neo4j.user is set (or set secret.existingSecret, or config.neo4j.user: \"\" for no authentication)" }}
{{- end }}
{{- if and (or .Values.secret.neo4jPassword .Values.secret.kafkaSaslPassword) (not .Values.secret.create) }}
{{- fail "secret.neo4jPassword or secret.kafkaSaslPassword is set but secret.create is false: nothing would pass it to the consumer" }}
{{- end }}
{{- if and .Values.secret.existingSecret .Values.secret.kafkaSaslPassword }}
{{- fail "only one of secret.existingSecret and secret.kafkaSaslPassword may be set" }}
{{- end }}
{{- if and .Values.secret.asFiles .Values.secret.extraEnv }}
{{- fail "secret.extraEnv is passed as variables, which secret.asFiles turns off: move those variables to config.extraEnv or a mounted file" }}
{{- end }}
{{- if and .Values.config.kafka.sasl.mechanism (not .Values.config.kafka.sasl.username) }}
{{- fail "config.kafka.sasl.username is required with config.kafka.sasl.mechanism" }}
{{- end }}
{{- if and .Values.config.kafka.sasl.mechanism (not .Values.secret.existingSecret) (not .Values.secret.kafkaSaslPassword) }}
{{- fail "secret.kafkaSaslPassword is required with config.kafka.sasl.mechanism (or set secret.existingSecret)" }}
{{- end }}
{{- if and (not .Values.config.kafka.sasl.mechanism) .Values.secret.kafkaSaslPassword }}
{{- fail "secret.kafkaSaslPassword is set but config.kafka.sasl.mechanism is empty" }}
{{- end }}
{{- if and .Values.podDisruptionBudget.enabled (not (kindIs "invalid" .Values.podDisruptionBudget.minAvailable)) (not (kindIs "invalid" .Values.podDisruptionBudget.maxUnavailable)) }}
{{- fail "podDisruptionBudget: set only one of minAvailable and maxUnavailable" }}
{{- end }}
{{- if ne (empty .Values.config.openlineage.http.tls.certFile) (empty .Values.config.openlineage.http.tls.keyFile) }}
{{- fail "config.openlineage.http.tls.certFile and keyFile go together" }}
{{- end }}
{{- end }}

{{/* The explorer's labels: its own name, so the consumer's selectors never match its pods. */}}
{{- define "colline.uiSelectorLabels" -}}
app.kubernetes.io/name: {{ include "colline.name" . }}-ui
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "colline.uiLabels" -}}
helm.sh/chart: {{ include "colline.chart" . }}
{{ include "colline.uiSelectorLabels" . }}
app.kubernetes.io/version: {{ .Values.image.tag | default .Chart.AppVersion | quote }}
app.kubernetes.io/component: ui
app.kubernetes.io/part-of: colline
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Fails on contradictory explorer values; included by ui.yaml. */}}
{{- define "colline.validateUI" -}}
{{- $ui := .Values.ui }}
{{- if and $ui.auth.basicUser (not $ui.secret.basicPassword) (not $ui.secret.existingSecret) }}
{{- fail "ui.secret.basicPassword is required with ui.auth.basicUser (or set ui.secret.existingSecret)" }}
{{- end }}
{{- if and $ui.secret.basicPassword (not $ui.auth.basicUser) }}
{{- fail "ui.secret.basicPassword is set but ui.auth.basicUser is empty" }}
{{- end }}
{{- if and $ui.auth.proxyUserHeader (not $ui.auth.proxyTrustedNets) }}
{{- fail "ui.auth.proxyTrustedNets is required with ui.auth.proxyUserHeader: the networks of the proxy, so nobody else can send the header" }}
{{- end }}
{{- if and $ui.secret.existingSecret (or $ui.secret.basicPassword $ui.secret.token $ui.secret.analyzerToken) }}
{{- fail "only one of ui.secret.existingSecret and ui.secret.basicPassword/token/analyzerToken may be set" }}
{{- end }}
{{- if and $ui.secret.analyzerToken (not $ui.analyzerURL) }}
{{- fail "ui.secret.analyzerToken is set but ui.analyzerURL is empty: the token is only sent to the analyzer" }}
{{- end }}
{{- if and $ui.secret.token (lt (len $ui.secret.token) 16) }}
{{- fail "ui.secret.token must be at least 16 characters (e.g. openssl rand -hex 32)" }}
{{- end }}
{{- if ne (empty $ui.tls.certFile) (empty $ui.tls.keyFile) }}
{{- fail "ui.tls.certFile and ui.tls.keyFile go together" }}
{{- end }}
{{- if and (not (include "colline.uiAuthenticates" .)) (not $ui.auth.anonymous) }}
{{- if ne $ui.service.type "ClusterIP" }}
{{- fail (printf "ui.service.type %s would expose an explorer without authentication beyond the cluster: set ui.auth.basicUser, ui.secret.token, ui.auth.proxyUserHeader or ui.secret.existingSecret (or ui.auth.anonymous: true to accept it)" $ui.service.type) }}
{{- end }}
{{- if .Values.networkPolicy.uiFrom }}
{{- fail "networkPolicy.uiFrom opens an explorer without authentication to other namespaces: set ui.auth.basicUser, ui.secret.token, ui.auth.proxyUserHeader or ui.secret.existingSecret (or ui.auth.anonymous: true to accept it)" }}
{{- end }}
{{- end }}
{{- end }}

{{/* "true" when the explorer authenticates its users (an existing Secret is assumed to hold a password or token). */}}
{{- define "colline.uiAuthenticates" -}}
{{- $ui := .Values.ui }}
{{- if or $ui.auth.basicUser $ui.secret.token $ui.auth.proxyUserHeader $ui.secret.existingSecret }}true{{- end }}
{{- end }}
