/** Errors of the programmatic API; the control server maps `not_found` to 404 and `bad_request` to 400. */
export class SimError extends Error {
  constructor(
    readonly code: 'not_found' | 'bad_request',
    message: string,
  ) {
    super(message);
    this.name = 'SimError';
  }
}
