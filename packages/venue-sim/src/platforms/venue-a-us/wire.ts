// https://docs.polymarket.us/api-reference/introduction (the gateway's wire conventions)
import { pmUsAmount } from '@depthgate/feeds';
import { formatScaled } from '../../core/decimal';
import { json, type PlatformErrors, type SimResponse } from '../../http/types';

/**
 * The 429 body is documented ([V], rate-limits.md). The gateway is a grpc-gateway (protos/gateway/...), so other
 * errors use its `{code, message, details}` shape with gRPC codes ([U]: not documented).
 */
export const pmUsErrors: PlatformErrors = {
  notFound: () => json(404, { code: 5, message: 'Not Found', details: [] }),
  unauthorized: () => json(401, { code: 16, message: 'Unauthorized', details: [] }),
  rateLimited: () => json(429, { status: 429, message: 'Too Many Requests' }),
  serverError: (status) => json(status, { code: 13, message: 'Internal Server Error', details: [] }),
};

/** grpc-gateway's 400 (code 3, InvalidArgument). */
export const invalid = (message: string): SimResponse => json(400, { code: 3, message, details: [] });

/** An `Amount` [V]: `value` a decimal string (prices have 3 decimals: milli-dollars here), `currency` USD. */
export const amount = (e3: number) => pmUsAmount(formatScaled(e3, 3));

/** An int32 path parameter as grpc-gateway parses it; a 400 otherwise. */
export function int32(value: string | undefined, name: string): number | SimResponse {
  const v = value ?? '';
  return /^\d{1,10}$/.test(v) && Number(v) <= 2 ** 31 - 1
    ? Number(v)
    : invalid(`parsing field "${name}": invalid int32 "${v}"`);
}
