import fc from 'fast-check';

/** Runs a synchronous fast-check property and records it as one passing assertion. */
export function prop<T extends unknown[]>(
  t: { pass(m: string): unknown },
  p: fc.IProperty<T>,
  params?: fc.Parameters<T>,
): void {
  fc.assert(p, params);
  t.pass('property holds');
}
