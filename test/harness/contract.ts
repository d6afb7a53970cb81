// Checks every REST response the tests receive against the control plane's OpenAPI document.
import Ajv2020 from "ajv/dist/2020.js";
import addFormats from "ajv-formats";
import type { ValidateFunction } from "ajv";

interface OpenApiDoc {
  paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { schema: unknown }> }> }>>;
  components?: { schemas?: Record<string, unknown> };
}

export class ContractChecker {
  private readonly ajv: InstanceType<typeof Ajv2020.default>;
  private readonly cache = new Map<string, ValidateFunction | null>();
  private readonly templates: { re: RegExp; path: string }[];

  constructor(private readonly doc: OpenApiDoc) {
    this.ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(this.ajv);
    this.ajv.addSchema({ $id: "openapi", components: doc.components ?? {} });
    this.templates = Object.keys(doc.paths).map((p) => ({ path: p, re: new RegExp(`^${p.replace(/\{[^}]+\}/g, "[^/]+")}$`) }));
  }

  /** Returns a list of problems (empty = conforms). Paths outside the document are a problem too. */
  check(method: string, path: string, status: number, body: unknown): string[] {
    const tpl = this.templates.find((t) => t.re.test(path));
    if (!tpl) return [`${method} ${path}: not in the OpenAPI document`];
    const op = this.doc.paths[tpl.path]?.[method.toLowerCase()];
    if (!op) return [`${method} ${tpl.path}: method not in the OpenAPI document`];
    const resp = op.responses[String(status)];
    if (!resp) return [`${method} ${tpl.path}: status ${status} not documented`];
    const schema = resp.content?.["application/json"]?.schema;
    if (!schema) return body === undefined || body === "" ? [] : [`${method} ${tpl.path} ${status}: documented without a body but got one`];
    const key = `${method} ${tpl.path} ${status}`;
    let validate = this.cache.get(key);
    if (validate === undefined) {
      const rewritten = JSON.parse(JSON.stringify(schema).replace(/"#\/components\//g, '"openapi#/components/')) as object;
      validate = this.ajv.compile(rewritten);
      this.cache.set(key, validate);
    }
    if (!validate) return [];
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${key}: ${e.instancePath} ${e.message}`);
  }
}
