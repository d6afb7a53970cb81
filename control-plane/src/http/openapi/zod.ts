// zod extended with .openapi() metadata: the schemas here are the REST contract's single source of truth.
import { extendZodWithOpenApi } from "@asteasolutions/zod-to-openapi";
import { z } from "zod";

extendZodWithOpenApi(z);

export { z };
