/**
 * The bodies every depthgate HTTP service answers with, as zod schemas: errors, `/health`, `/ready`. Each service's
 * OpenAPI document is generated from these and from its own schemas (services/history/src/contract/,
 * services/gateway/src/openapi.ts), and every integration test validates the answers it receives against that
 * document (@depthgate/test-utils, `ContractChecker`).
 */
import * as z from 'zod';
import { ERROR_CODES, statusFor, type ErrorBody, type ErrorCode } from './errors';

/** The error codes answered with `status`, in ERROR_CODES order. */
export function errorCodesFor(status: number): ErrorCode[] {
  return ERROR_CODES.filter((code) => statusFor(code) === status);
}

const errorBodies = new Map<number, z.ZodType<ErrorBody>>();

/**
 * The body of an error answer with `status`: `{"error": code, "message": text}`, `error` one of the codes that map
 * to that status (so a body whose code and status disagree breaks the contract). One schema per status, registered
 * as the component `Error<status>`.
 */
export function errorBodySchema(status: number): z.ZodType<ErrorBody> {
  let schema = errorBodies.get(status);
  if (schema === undefined) {
    const codes = errorCodesFor(status);
    if (codes.length === 0) throw new Error(`no error code maps to status ${status}`);
    schema = z
      .object({
        error: z.enum(codes as [ErrorCode, ...ErrorCode[]]).meta({ description: 'Error code' }),
        message: z.string().meta({ description: 'What went wrong, for a person' }),
      })
      .meta({ id: `Error${status}`, description: `An error answered with HTTP ${status}` });
    errorBodies.set(status, schema);
  }
  return schema;
}

/** `GET /health`: liveness, the spec's body. */
export const HealthBody = z.object({ status: z.literal('ok') }).meta({ id: 'Health' });

/** `GET /ready`: readiness, each dependency's check by name (healthRoutes, health.ts). */
export const ReadyBody = z
  .object({
    status: z
      .enum(['ready', 'not_ready', 'draining'])
      .meta({ description: 'ready (200); not_ready: a check failed, or draining: the process is stopping (503)' }),
    checks: z
      .record(z.string(), z.boolean())
      .meta({ description: 'Each dependency by name: true when it answered in time (empty while draining)' }),
  })
  .meta({ id: 'Ready' });

/** A JSON document a service serves about itself (its OpenAPI, the gateway's AsyncAPI): only what says which it is. */
export function documentBody(key: string, version: string) {
  return z.looseObject({ [key]: z.literal(version), info: z.looseObject({ title: z.string() }) });
}

const json = (schema: z.ZodType) => ({ 'application/json': { schema } });

/**
 * What every service answers itself, as OpenAPI path items (zod-openapi's form): `/health`, `/ready` (its summary
 * names the service's checks), `/metrics` and `/openapi.json`. Each service's generated document starts from these.
 */
export function servicePaths(o: { readySummary: string }) {
  return {
    '/health': {
      get: {
        summary: 'Liveness',
        security: [],
        responses: { '200': { description: 'The process is up', content: json(HealthBody) } },
      },
    },
    '/ready': {
      get: {
        summary: o.readySummary,
        security: [],
        responses: {
          '200': { description: 'Ready', content: json(ReadyBody) },
          '503': { description: 'Not ready, or draining', content: json(ReadyBody) },
        },
      },
    },
    '/metrics': {
      get: {
        summary: 'Prometheus metrics',
        security: [],
        responses: {
          '200': {
            description: 'Metrics in the Prometheus text format',
            content: { 'text/plain': { schema: z.string() } },
          },
        },
      },
    },
    '/openapi.json': {
      get: {
        summary: 'This document',
        security: [],
        responses: { '200': { description: 'OpenAPI 3.1', content: json(documentBody('openapi', '3.1.0')) } },
      },
    },
  };
}
