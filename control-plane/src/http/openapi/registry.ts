// Collects every route's schemas and produces the OpenAPI 3.1 document served at /openapi.json.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from "@asteasolutions/zod-to-openapi";

export function createRegistry(): OpenAPIRegistry {
  const registry = new OpenAPIRegistry();
  registry.registerComponent("securitySchemes", "apiKey", {
    type: "http",
    scheme: "bearer",
    description: "An agentgov API key (svc_api_…, svc_agent_…), sent as Authorization: Bearer <key>",
  });
  return registry;
}

export function buildDocument(registry: OpenAPIRegistry): ReturnType<OpenApiGeneratorV31["generateDocument"]> {
  return new OpenApiGeneratorV31(registry.definitions).generateDocument({
    openapi: "3.1.0",
    info: {
      title: "agentgov control plane",
      version: "1.0.0",
      description:
        "REST API of agentgov. Group A (/v1): snake_case, cursor pagination, errors {error:{code,message,request_id}}. " +
        "Group B (/api): camelCase, offset pagination, errors {error, details?}.",
    },
    security: [{ apiKey: [] }],
  });
}
