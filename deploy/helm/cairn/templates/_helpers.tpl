{{/* Names, labels and the pieces the API, the generator and the migration Job share. */}}

{{- define "cairn.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "cairn.fullname" -}}
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

{{- define "cairn.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
app.kubernetes.io/name: {{ include "cairn.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* Selector labels of one component: (dict "root" $ "component" "api") */}}
{{- define "cairn.selectorLabels" -}}
app.kubernetes.io/name: {{ include "cairn.name" .root }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end }}

{{- define "cairn.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "cairn.secretName" -}}
{{- .Values.secrets.existingSecret | default (printf "%s-secrets" (include "cairn.fullname" .)) }}
{{- end }}

{{/* Environment every Cairn process reads; secrets come as files. */}}
{{- define "cairn.commonEnv" -}}
- name: CAIRN_DATABASE_URL_FILE
  value: /run/secrets/cairn/database-url
- name: CAIRN_REDIS_URL_FILE
  value: /run/secrets/cairn/redis-url
- name: CAIRN_LOG_FORMAT
  value: {{ .Values.config.logFormat | quote }}
- name: CAIRN_EMBED_PROVIDER
  value: {{ .Values.config.embedProvider | quote }}
{{- if gt (int .Values.config.metricsPort) 0 }}
- name: CAIRN_METRICS_ADDR
  value: {{ printf "0.0.0.0:%d" (int .Values.config.metricsPort) | quote }}
{{- end }}
{{- with .Values.config.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end }}

{{- define "cairn.secretVolume" -}}
- name: secrets
  secret:
    secretName: {{ include "cairn.secretName" . }}
    defaultMode: 0440
- name: tmp
  emptyDir:
    medium: Memory
    sizeLimit: 64Mi
{{- end }}

{{- define "cairn.secretMounts" -}}
- name: secrets
  mountPath: /run/secrets/cairn
  readOnly: true
- name: tmp
  mountPath: /tmp
{{- end }}

{{- define "cairn.podSecurity" -}}
automountServiceAccountToken: false
{{- with .Values.serviceAccountName }}
serviceAccountName: {{ . }}
{{- end }}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- end }}

{{/* The LLM provider's environment: the generator's model, and the API's for asks. */}}
{{- define "cairn.providerEnv" -}}
{{- $provider := .Values.generator.provider -}}
- name: CAIRN_PROVIDER
  value: {{ $provider | quote }}
{{- if eq $provider "anthropic" }}
- name: CAIRN_ANTHROPIC_MODEL
  value: {{ .Values.generator.anthropicModel | quote }}
- name: CAIRN_ANTHROPIC_API_KEY_FILE
  value: /run/secrets/cairn/provider-api-key
{{- else if eq $provider "openai" }}
- name: CAIRN_OPENAI_BASE_URL
  value: {{ required "generator.openaiBaseUrl is required with provider openai" .Values.generator.openaiBaseUrl | quote }}
- name: CAIRN_OPENAI_MODEL
  value: {{ required "generator.openaiModel is required with provider openai" .Values.generator.openaiModel | quote }}
{{- if .Values.generator.openaiNeedsKey }}
- name: CAIRN_OPENAI_API_KEY_FILE
  value: /run/secrets/cairn/provider-api-key
{{- end }}
{{- end }}
{{- end }}
