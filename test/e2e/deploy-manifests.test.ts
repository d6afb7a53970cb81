// The Kubernetes manifests in deploy/kubernetes, checked offline: every document matches the schema of
// its kind (strict: no unknown fields, ConfigMap values are strings), and the pieces fit together:
// selectors, Service ports, probes on real endpoints and ports, Secret keys that exist, environment
// that the programs accept (the real config schemas parse it), grace periods that cover the shutdown.
import test from "ava";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import { EnvSchema, loadControlPlaneConfig } from "../../control-plane/src/config/env.js";
import { SidecarEnvSchema, loadSidecarConfig } from "../../data-plane/src/config/env.js";
import { KubeObject, Kustomization, type ContainerSpec, type DeploymentObject } from "../harness/deploy-schemas.js";

const dir = join(fileURLToPath(import.meta.url), "..", "..", "..", "deploy", "kubernetes");
const files = readdirSync(dir).filter((f) => f.endsWith(".yaml"));
const manifestFiles = files.filter((f) => f !== "kustomization.yaml");
/** Shapes to copy, never applied as they are (the Secrets): checked like the rest, left out of the kustomization. */
const examples = manifestFiles.filter((f) => f.endsWith(".example.yaml"));

function load(file: string): unknown[] {
  const docs = parseAllDocuments(readFileSync(join(dir, file), "utf8"));
  return docs.map((d) => {
    if (d.errors.length > 0) throw new Error(`${file}: ${d.errors.map((e) => e.message).join("; ")}`);
    return d.toJS() as unknown;
  });
}

const objects: { file: string; obj: KubeObject }[] = [];
const problems: string[] = [];
for (const file of manifestFiles) {
  for (const raw of load(file)) {
    const r = KubeObject.safeParse(raw);
    if (r.success) objects.push({ file, obj: r.data });
    else problems.push(`${file}: ${(raw as { kind?: string }).kind ?? "?"} ${(raw as { metadata?: { name?: string } }).metadata?.name ?? ""}: ${r.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`);
  }
}
const ofKind = <K extends KubeObject["kind"]>(kind: K) => objects.map((o) => o.obj).filter((o): o is Extract<KubeObject, { kind: K }> => o.kind === kind);
const deployments = ofKind("Deployment");
const controlPlane = deployments.find((d) => d.metadata.name === "agentgov-control-plane");
const agentDeployment = deployments.find((d) => d.spec.template.spec.initContainers?.some((c) => c.name === "agentgov-sidecar"));
const sidecarContainer = agentDeployment?.spec.template.spec.initContainers?.find((c) => c.name === "agentgov-sidecar");
const cpContainer = controlPlane?.spec.template.spec.containers[0];

/** The environment a container gets: envFrom ConfigMaps, then env (Secret references resolved from the manifests' placeholder Secrets). */
function containerEnv(d: DeploymentObject, c: ContainerSpec): Record<string, string> {
  const ns = d.metadata.namespace;
  const env: Record<string, string> = {};
  for (const from of c.envFrom ?? []) {
    if (from.configMapRef) {
      const cm = ofKind("ConfigMap").find((m) => m.metadata.name === from.configMapRef!.name && m.metadata.namespace === ns);
      if (!cm) throw new Error(`ConfigMap ${from.configMapRef.name} not found in ${ns}`);
      Object.assign(env, cm.data);
    }
  }
  for (const e of c.env ?? []) {
    if (e.value !== undefined) env[e.name] = e.value;
    const ref = e.valueFrom?.secretKeyRef;
    if (ref) {
      const secret = ofKind("Secret").find((s) => s.metadata.name === ref.name && s.metadata.namespace === ns);
      const value = secret?.stringData?.[ref.key];
      if (value === undefined && ref.optional) continue;
      if (value === undefined) throw new Error(`${c.name}: Secret ${ns}/${ref.name} has no key ${ref.key}`);
      env[e.name] = value;
    }
  }
  return env;
}

test("every manifest document matches the schema of its kind", (t) => {
  t.deepEqual(problems, []);
  t.true(objects.length >= 9);
  for (const kind of ["Namespace", "Secret", "ConfigMap", "ServiceAccount", "Deployment", "Service", "PodDisruptionBudget"] as const) t.true(ofKind(kind).length > 0, `no ${kind}`);
});

test("the kustomization lists every manifest but the examples; no example holds a credential the programs would accept as it is", (t) => {
  const k = Kustomization.parse(load("kustomization.yaml")[0]);
  t.deepEqual([...k.resources].sort(), manifestFiles.filter((f) => !examples.includes(f)).sort());
  t.deepEqual(examples, ["secrets.example.yaml"]);
  for (const { file, obj } of objects.filter((o) => examples.includes(o.file))) {
    const data = obj.kind === "Secret" ? (obj.stringData ?? {}) : {};
    t.false("BOOTSTRAP_API_KEY" in data || "IDP_WEBHOOK_SECRET" in data, `${file}: a placeholder admin key or webhook secret would work if applied`);
  }
});

test("selectors match pod labels; Services and PDBs select a Deployment; Service target ports exist", (t) => {
  for (const d of deployments) {
    for (const [k, v] of Object.entries(d.spec.selector.matchLabels)) t.is(d.spec.template.metadata.labels[k], v, `${d.metadata.name}: selector ${k}`);
  }
  const selects = (sel: Record<string, string>, ns: string | undefined) =>
    deployments.find((d) => d.metadata.namespace === ns && Object.entries(sel).every(([k, v]) => d.spec.template.metadata.labels[k] === v));
  for (const s of ofKind("Service")) {
    const d = selects(s.spec.selector, s.metadata.namespace);
    t.truthy(d, `Service ${s.metadata.name} selects no Deployment`);
    const ports = d!.spec.template.spec.containers.flatMap((c) => c.ports ?? []);
    for (const p of s.spec.ports) {
      const target = p.targetPort ?? p.port;
      t.true(ports.some((cp) => cp.name === target || cp.containerPort === target), `Service ${s.metadata.name}: targetPort ${target}`);
    }
  }
  for (const p of ofKind("PodDisruptionBudget")) t.truthy(selects(p.spec.selector.matchLabels, p.metadata.namespace), `PDB ${p.metadata.name}`);
});

test("every Secret and ConfigMap reference resolves, in the right namespace", (t) => {
  for (const d of deployments) {
    const spec = d.spec.template.spec;
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref) continue;
        const secret = ofKind("Secret").find((s) => s.metadata.name === ref.name && s.metadata.namespace === d.metadata.namespace);
        t.truthy(secret, `${d.metadata.name}/${c.name}: Secret ${ref.name}`);
        // An optional key may be left out of the example Secret (its real value is set out of band).
        if (!ref.optional) t.truthy(secret?.stringData?.[ref.key] ?? secret?.data?.[ref.key], `${d.metadata.name}/${c.name}: ${ref.name}.${ref.key}`);
      }
      for (const f of c.envFrom ?? []) {
        if (f.configMapRef) t.truthy(ofKind("ConfigMap").find((m) => m.metadata.name === f.configMapRef!.name && m.metadata.namespace === d.metadata.namespace));
      }
    }
    if (spec.serviceAccountName) t.truthy(ofKind("ServiceAccount").find((s) => s.metadata.name === spec.serviceAccountName && s.metadata.namespace === d.metadata.namespace));
    const volumes = new Set((spec.volumes ?? []).map((v) => v.name));
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) for (const m of c.volumeMounts ?? []) t.true(volumes.has(m.name), `${c.name}: volume ${m.name}`);
  }
  const namespaces = new Set(ofKind("Namespace").map((n) => n.metadata.name));
  for (const { obj } of objects) if (obj.kind !== "Namespace") t.true(namespaces.has(obj.metadata.namespace ?? ""), `${obj.kind} ${obj.metadata.name}: namespace ${obj.metadata.namespace}`);
});

test("control plane: its environment is a valid configuration; ports, probes and grace period match it", (t) => {
  t.truthy(controlPlane && cpContainer);
  const env = containerEnv(controlPlane!, cpContainer!);
  const known = new Set(Object.keys(EnvSchema.shape));
  t.deepEqual(Object.keys(env).filter((k) => !known.has(k)), [], "variables the control plane does not read");
  const config = loadControlPlaneConfig(env);
  t.is(config.HOST, "0.0.0.0");
  t.truthy(config.DATABASE_URL);
  t.truthy(config.CLICKHOUSE_URL, "the image has no embedded ClickHouse: CLICKHOUSE_URL is required");
  const port = (name: string) => cpContainer!.ports?.find((p) => p.name === name)?.containerPort;
  t.is(port("http"), config.PORT);
  t.is(port("grpc"), config.GRPC_PORT);
  t.like(cpContainer!.livenessProbe, { httpGet: { path: "/healthz", port: "http" } });
  t.like(cpContainer!.readinessProbe, { httpGet: { path: "/readyz", port: "http" } });
  t.like(cpContainer!.startupProbe, { grpc: { port: config.GRPC_PORT } });
  const grace = controlPlane!.spec.template.spec.terminationGracePeriodSeconds ?? 30;
  t.true(grace * 1000 > config.SHUTDOWN_DRAIN_MS + config.SHUTDOWN_TIMEOUT_MS + 5000, "terminationGracePeriodSeconds covers drain + in-flight + flush");
  t.true((controlPlane!.spec.replicas ?? 1) >= 2, "several replicas");
  t.is(controlPlane!.spec.strategy?.rollingUpdate?.maxUnavailable, 0);
  const annotations = controlPlane!.spec.template.metadata.annotations ?? {};
  t.is(annotations["prometheus.io/path"], "/metrics");
  t.is(Number(annotations["prometheus.io/port"]), config.PORT);
});

test("sidecar: a native sidecar in the agent's pod, with a valid configuration, probes and the control plane's gRPC address", (t) => {
  t.truthy(agentDeployment && sidecarContainer);
  t.is(sidecarContainer!.restartPolicy, "Always");
  const env = containerEnv(agentDeployment!, sidecarContainer!);
  const known = new Set(Object.keys(SidecarEnvSchema.shape));
  t.deepEqual(Object.keys(env).filter((k) => !known.has(k)), [], "variables the sidecar does not read");
  const config = loadSidecarConfig(env);
  t.is(config.SIDECAR_HOST, "0.0.0.0", "the kubelet probes the pod IP");
  t.is(sidecarContainer!.ports?.find((p) => p.name === "sidecar")?.containerPort, config.SIDECAR_PORT);
  t.like(sidecarContainer!.startupProbe, { httpGet: { path: "/readyz", port: "sidecar" } });
  t.like(sidecarContainer!.readinessProbe, { httpGet: { path: "/readyz" } });
  t.like(sidecarContainer!.livenessProbe, { httpGet: { path: "/healthz" } });
  // CONTROL_PLANE_GRPC_URL names the control plane's Service and its grpc port.
  const url = new URL(config.CONTROL_PLANE_GRPC_URL);
  const service = ofKind("Service").find((s) => s.metadata.name === "agentgov-control-plane")!;
  t.is(url.hostname.split(".").slice(0, 2).join("."), `${service.metadata.name}.${service.metadata.namespace}`);
  t.is(Number(url.port), service.spec.ports.find((p) => p.name === "grpc")?.port ?? -1);
  const grace = agentDeployment!.spec.template.spec.terminationGracePeriodSeconds ?? 30;
  t.true(grace * 1000 > config.SHUTDOWN_DRAIN_MS + config.SHUTDOWN_TIMEOUT_MS + 5000);
  t.is(sidecarContainer!.volumeMounts?.find((m) => m.mountPath === config.DATA_DIR)?.name, "agentgov-data", "the spool is on a volume");
  // The agent talks to the sidecar on localhost with the sidecar's key.
  const agent = agentDeployment!.spec.template.spec.containers[0]!;
  t.regex(agent.env?.find((e) => e.name === "OPENAI_BASE_URL")?.value ?? "", new RegExp(`^http://127\\.0\\.0\\.1:${config.SIDECAR_PORT}/v1/proxy/openai/v1$`));
});

test("pods run as non-root with a locked-down security context; images are pinned", (t) => {
  for (const d of deployments) {
    const spec = d.spec.template.spec;
    t.true(spec.securityContext?.runAsNonRoot, `${d.metadata.name}: runAsNonRoot`);
    t.is(spec.securityContext?.seccompProfile?.type, "RuntimeDefault");
    for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
      t.false(c.securityContext?.allowPrivilegeEscalation ?? true, `${c.name}: allowPrivilegeEscalation`);
      t.deepEqual(c.securityContext?.capabilities?.drop, ["ALL"], `${c.name}: capabilities`);
      t.regex(c.image, /:[\w][\w.-]*$/, `${c.name}: image tag`);
      t.false(c.image.endsWith(":latest"), `${c.name}: no :latest`);
      t.truthy(c.resources?.requests?.memory, `${c.name}: memory request`);
    }
  }
  t.true(cpContainer?.securityContext?.readOnlyRootFilesystem);
  t.truthy(cpContainer?.volumeMounts?.find((m) => m.mountPath === "/tmp"), "a writable /tmp (the root filesystem is read-only)");
});
