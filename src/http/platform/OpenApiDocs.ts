/** An endpoint's summary and description in the OpenAPI document, declared in one call. */
import { type HttpApiEndpoint, type HttpMethod, OpenApi } from "@effect/platform"

export const documented = (summary: string, description?: string) =>
<
  Name extends string,
  Method extends HttpMethod.HttpMethod,
  Path,
  UrlParams,
  Payload,
  Headers,
  Success,
  Error,
  R,
  RE
>(endpoint: HttpApiEndpoint.HttpApiEndpoint<Name, Method, Path, UrlParams, Payload, Headers, Success, Error, R, RE>) =>
  description === undefined
    ? endpoint.annotate(OpenApi.Summary, summary)
    : endpoint.annotate(OpenApi.Summary, summary).annotate(OpenApi.Description, description)
