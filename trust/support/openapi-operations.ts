/** The operations of the OpenAPI document the api serves (`GET /api/docs-json`), as the trust suite walks them. */

export interface JsonSchema {
  $ref?: string;
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  oneOf?: JsonSchema[];
  allOf?: JsonSchema[];
  anyOf?: JsonSchema[];
  [key: string]: unknown;
}

export interface OperationParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

export interface Operation {
  method: string;
  /** The path template, e.g. `/api/v1/vm/{vm_id}/exec`. */
  path: string;
  /** `METHOD /path` */
  id: string;
  parameters: OperationParameter[];
  /** The JSON body's schema, with its component name when it is a $ref. */
  body: { schema: JsonSchema; name: string | null; required: boolean } | null;
  /** Whether the operation asks for the bearer key. */
  secured: boolean;
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, any>>;
  components: { schemas: Record<string, JsonSchema> };
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method): Operation => {
      const op = item[method];
      const json = op.requestBody?.content?.['application/json']?.schema as JsonSchema | undefined;
      return {
        method: method.toUpperCase(),
        path,
        id: `${method.toUpperCase()} ${path}`,
        parameters: (op.parameters ?? []).map((p: any) => ({ name: p.name, in: p.in, required: p.required === true, schema: p.schema ?? {} })),
        body: json ? { schema: json, name: json.$ref ? json.$ref.split('/').pop()! : null, required: op.requestBody.required === true } : null,
        secured: Array.isArray(op.security) && op.security.length > 0,
      };
    }),
  );
}

/** The schema behind a `$ref` (and the schema itself otherwise). */
export function resolveSchema(document: OpenApiDocument, schema: JsonSchema): JsonSchema {
  let resolved = schema;
  for (let hops = 0; resolved.$ref && hops < 16; hops++) {
    resolved = document.components.schemas[resolved.$ref.replace('#/components/schemas/', '')] ?? {};
  }
  return resolved;
}

/** The JSON types a schema allows, `null` included when it is nullable. */
export function typesOf(schema: JsonSchema): string[] {
  const declared = [schema.type ?? []].flat();
  if (declared.length > 0) return declared;
  if (schema.enum) return [...new Set(schema.enum.map((value) => (value === null ? 'null' : typeof value)))];
  if (schema.properties || schema.additionalProperties) return ['object'];
  return [];
}

/** `/api/v1/vm/{vm_id}/exec` with the values given for its parameters, each URL-encoded. */
export function fillPath(template: string, values: Record<string, string>): string {
  return template.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`no value for path parameter ${name} of ${template}`);
    return encodePathSegment(values[name]);
  });
}

/**
 * A path segment, percent-encoded. A lone surrogate has no UTF-8 form (encodeURIComponent throws):
 * it goes as the three bytes of its WTF-8 form, invalid UTF-8 that the server must refuse.
 */
export function encodePathSegment(value: string): string {
  let encoded = '';
  for (const character of value) {
    const code = character.charCodeAt(0);
    if (character.length === 1 && code >= 0xd800 && code <= 0xdfff) {
      encoded += [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((byte) => `%${byte.toString(16).toUpperCase()}`).join('');
    } else {
      encoded += encodeURIComponent(character);
    }
  }
  return encoded;
}
