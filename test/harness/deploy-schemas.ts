// Offline schemas for the deployment files: the parts of the Kubernetes API and of the Compose
// specification that deploy/ uses, as strict zod objects (an unknown or misspelt field is an error,
// and so is a ConfigMap or environment value that YAML turned into a number).
import { z } from "zod";

const dns1123Label = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).max(63);
const dns1123Subdomain = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/).max(253);
const labelValue = z.string().regex(/^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/).max(63);
const labels = z.record(z.string().regex(/^([a-z0-9.-]+\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/), labelValue);
const quantity = z.union([z.string().regex(/^\d+(\.\d+)?(m|Ki|Mi|Gi|Ti|k|M|G|T)?$/), z.number().nonnegative()]);
const portNumber = z.number().int().min(1).max(65535);
const portName = z.string().regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/).max(15).refine((s) => /[a-z]/.test(s), "a port name needs a letter");
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/);

export const ObjectMeta = z
  .object({ name: dns1123Subdomain, namespace: dns1123Label.optional(), labels: labels.optional(), annotations: z.record(z.string(), z.string()).optional() })
  .strict();

const KeyRef = z.object({ name: dns1123Subdomain, key: z.string().min(1), optional: z.boolean().optional() }).strict();

export const EnvVar = z
  .object({
    name: envName,
    value: z.string().optional(),
    valueFrom: z
      .object({ secretKeyRef: KeyRef.optional(), configMapKeyRef: KeyRef.optional(), fieldRef: z.object({ fieldPath: z.string() }).strict().optional() })
      .strict()
      .refine((v) => Object.keys(v).length === 1, "valueFrom needs exactly one source")
      .optional(),
  })
  .strict()
  .refine((e) => (e.value === undefined) !== (e.valueFrom === undefined), "an env var needs either value or valueFrom");

const EnvFrom = z
  .object({
    configMapRef: z.object({ name: dns1123Subdomain, optional: z.boolean().optional() }).strict().optional(),
    secretRef: z.object({ name: dns1123Subdomain, optional: z.boolean().optional() }).strict().optional(),
    prefix: z.string().optional(),
  })
  .strict();

const ProbePort = z.union([portNumber, portName]);
export const Probe = z
  .object({
    httpGet: z.object({ path: z.string().startsWith("/"), port: ProbePort, scheme: z.enum(["HTTP", "HTTPS"]).optional() }).strict().optional(),
    grpc: z.object({ port: portNumber, service: z.string().optional() }).strict().optional(),
    tcpSocket: z.object({ port: ProbePort }).strict().optional(),
    exec: z.object({ command: z.array(z.string()).min(1) }).strict().optional(),
    initialDelaySeconds: z.number().int().min(0).optional(),
    periodSeconds: z.number().int().min(1).optional(),
    timeoutSeconds: z.number().int().min(1).optional(),
    failureThreshold: z.number().int().min(1).optional(),
    successThreshold: z.number().int().min(1).optional(),
  })
  .strict()
  .refine((p) => [p.httpGet, p.grpc, p.tcpSocket, p.exec].filter(Boolean).length === 1, "a probe needs exactly one handler");

const SeccompProfile = z.object({ type: z.enum(["RuntimeDefault", "Localhost", "Unconfined"]), localhostProfile: z.string().optional() }).strict();

const ContainerSecurityContext = z
  .object({
    allowPrivilegeEscalation: z.boolean().optional(),
    readOnlyRootFilesystem: z.boolean().optional(),
    runAsNonRoot: z.boolean().optional(),
    runAsUser: z.number().int().optional(),
    runAsGroup: z.number().int().optional(),
    privileged: z.boolean().optional(),
    capabilities: z.object({ drop: z.array(z.string()).optional(), add: z.array(z.string()).optional() }).strict().optional(),
    seccompProfile: SeccompProfile.optional(),
  })
  .strict();

const ResourceList = z.object({ cpu: quantity.optional(), memory: quantity.optional(), "ephemeral-storage": quantity.optional() }).strict();

export const Container = z
  .object({
    name: dns1123Label,
    image: z.string().min(1),
    imagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
    command: z.array(z.string()).optional(),
    args: z.array(z.string()).optional(),
    ports: z.array(z.object({ name: portName.optional(), containerPort: portNumber, protocol: z.enum(["TCP", "UDP", "SCTP"]).optional() }).strict()).optional(),
    env: z.array(EnvVar).optional(),
    envFrom: z.array(EnvFrom).optional(),
    startupProbe: Probe.optional(),
    livenessProbe: Probe.optional(),
    readinessProbe: Probe.optional(),
    resources: z.object({ requests: ResourceList.optional(), limits: ResourceList.optional() }).strict().optional(),
    securityContext: ContainerSecurityContext.optional(),
    volumeMounts: z.array(z.object({ name: dns1123Label, mountPath: z.string().startsWith("/"), readOnly: z.boolean().optional(), subPath: z.string().optional() }).strict()).optional(),
    /** Only on init containers: "Always" makes a native sidecar (Kubernetes ≥ 1.29). */
    restartPolicy: z.literal("Always").optional(),
  })
  .strict();

const Volume = z
  .object({
    name: dns1123Label,
    emptyDir: z.object({ sizeLimit: quantity.optional(), medium: z.enum(["", "Memory"]).optional() }).strict().optional(),
    persistentVolumeClaim: z.object({ claimName: dns1123Subdomain, readOnly: z.boolean().optional() }).strict().optional(),
    secret: z.object({ secretName: dns1123Subdomain, optional: z.boolean().optional() }).strict().optional(),
    configMap: z.object({ name: dns1123Subdomain, optional: z.boolean().optional() }).strict().optional(),
  })
  .strict()
  .refine((v) => Object.keys(v).length === 2, "a volume needs exactly one source");

const LabelSelector = z.object({ matchLabels: labels }).strict();

export const PodSpec = z
  .object({
    serviceAccountName: dns1123Subdomain.optional(),
    automountServiceAccountToken: z.boolean().optional(),
    terminationGracePeriodSeconds: z.number().int().min(0).optional(),
    securityContext: z
      .object({ runAsNonRoot: z.boolean().optional(), runAsUser: z.number().int().optional(), runAsGroup: z.number().int().optional(), fsGroup: z.number().int().optional(), seccompProfile: SeccompProfile.optional() })
      .strict()
      .optional(),
    topologySpreadConstraints: z
      .array(z.object({ maxSkew: z.number().int().min(1), topologyKey: z.string(), whenUnsatisfiable: z.enum(["DoNotSchedule", "ScheduleAnyway"]), labelSelector: LabelSelector }).strict())
      .optional(),
    initContainers: z.array(Container).optional(),
    containers: z.array(Container.refine((c) => c.restartPolicy === undefined, "restartPolicy is only for init containers")).min(1),
    volumes: z.array(Volume).optional(),
  })
  .strict();

const Namespace = z.object({ apiVersion: z.literal("v1"), kind: z.literal("Namespace"), metadata: ObjectMeta }).strict();
const ServiceAccount = z.object({ apiVersion: z.literal("v1"), kind: z.literal("ServiceAccount"), metadata: ObjectMeta, automountServiceAccountToken: z.boolean().optional() }).strict();
const Secret = z
  .object({ apiVersion: z.literal("v1"), kind: z.literal("Secret"), metadata: ObjectMeta, type: z.string().optional(), stringData: z.record(z.string(), z.string()).optional(), data: z.record(z.string(), z.string()).optional() })
  .strict();
const ConfigMap = z.object({ apiVersion: z.literal("v1"), kind: z.literal("ConfigMap"), metadata: ObjectMeta, data: z.record(envName, z.string()) }).strict();
const Deployment = z
  .object({
    apiVersion: z.literal("apps/v1"),
    kind: z.literal("Deployment"),
    metadata: ObjectMeta,
    spec: z
      .object({
        replicas: z.number().int().min(0).optional(),
        revisionHistoryLimit: z.number().int().min(0).optional(),
        selector: LabelSelector,
        strategy: z
          .object({ type: z.enum(["RollingUpdate", "Recreate"]), rollingUpdate: z.object({ maxSurge: z.union([z.number().int(), z.string()]).optional(), maxUnavailable: z.union([z.number().int(), z.string()]).optional() }).strict().optional() })
          .strict()
          .optional(),
        template: z.object({ metadata: z.object({ labels, annotations: z.record(z.string(), z.string()).optional() }).strict(), spec: PodSpec }).strict(),
      })
      .strict(),
  })
  .strict();
const Service = z
  .object({
    apiVersion: z.literal("v1"),
    kind: z.literal("Service"),
    metadata: ObjectMeta,
    spec: z
      .object({
        type: z.enum(["ClusterIP", "NodePort", "LoadBalancer"]).optional(),
        selector: labels,
        ports: z.array(z.object({ name: portName.optional(), port: portNumber, targetPort: z.union([portNumber, portName]).optional(), protocol: z.enum(["TCP", "UDP", "SCTP"]).optional(), appProtocol: z.string().optional() }).strict()).min(1),
      })
      .strict(),
  })
  .strict();
const PodDisruptionBudget = z
  .object({
    apiVersion: z.literal("policy/v1"),
    kind: z.literal("PodDisruptionBudget"),
    metadata: ObjectMeta,
    spec: z.object({ minAvailable: z.union([z.number().int(), z.string()]).optional(), maxUnavailable: z.union([z.number().int(), z.string()]).optional(), selector: LabelSelector }).strict(),
  })
  .strict();
export const Kustomization = z.object({ apiVersion: z.literal("kustomize.config.k8s.io/v1beta1"), kind: z.literal("Kustomization"), resources: z.array(z.string()).min(1) }).strict();

export const KubeObject = z.discriminatedUnion("kind", [Namespace, ServiceAccount, Secret, ConfigMap, Deployment, Service, PodDisruptionBudget]);
export type KubeObject = z.infer<typeof KubeObject>;
export type DeploymentObject = z.infer<typeof Deployment>;
export type ContainerSpec = z.infer<typeof Container>;

// Compose specification (the subset deploy/docker-compose.yml uses).
const duration = z.string().regex(/^(\d+(\.\d+)?(ms|s|m|h))+$/);
const ComposeService = z
  .object({
    image: z.string().min(1).optional(),
    build: z.object({ context: z.string(), dockerfile: z.string() }).strict().optional(),
    command: z.union([z.string(), z.array(z.string())]).optional(),
    environment: z.record(envName, z.string()).optional(),
    ports: z.array(z.string().regex(/^(\d+\.\d+\.\d+\.\d+:)?\d+:\d+$/)).optional(),
    volumes: z.array(z.string().regex(/^[^:]+:\/[^:]*(:ro|:rw)?$/)).optional(),
    depends_on: z.record(z.string(), z.object({ condition: z.enum(["service_started", "service_healthy", "service_completed_successfully"]) }).strict()).optional(),
    healthcheck: z.object({ test: z.array(z.string()).min(2), interval: duration, timeout: duration, retries: z.number().int().min(1), start_period: duration.optional() }).strict().optional(),
    restart: z.enum(["no", "always", "on-failure", "unless-stopped"]).optional(),
    stop_grace_period: duration.optional(),
    ulimits: z.record(z.string(), z.object({ soft: z.number().int(), hard: z.number().int() }).strict()).optional(),
    user: z.string().optional(),
    logging: z.object({ driver: z.string(), options: z.record(z.string(), z.string()).optional() }).strict().optional(),
  })
  .strict()
  .refine((s) => s.image !== undefined || s.build !== undefined, "a service needs an image or a build");

export const ComposeFile = z
  .object({
    name: z.string().regex(/^[a-z0-9][a-z0-9_-]*$/).optional(),
    services: z.record(z.string().regex(/^[a-zA-Z0-9._-]+$/), ComposeService),
    volumes: z.record(z.string(), z.null()).optional(),
  })
  .catchall(z.unknown())
  .superRefine((f, ctx) => {
    for (const k of Object.keys(f)) if (!["name", "services", "volumes"].includes(k) && !k.startsWith("x-")) ctx.addIssue({ code: "custom", message: `unknown top-level key ${k}`, path: [k] });
  });
export type ComposeFileT = z.infer<typeof ComposeFile>;
