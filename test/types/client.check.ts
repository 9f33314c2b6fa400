// Compile-time checks of the typed client (src/client: openapi-fetch over the generated
// schema.d.ts). Never run: `npm run build` type-checks this file, so a line marked
// `@ts-expect-error` that compiles fails the build (TS2578).
import { createClient } from '../../src/client/index.js';

export async function typedCalls(): Promise<void> {
  const api = createClient('http://127.0.0.1:8080', 'key');
  const { data: menu } = await api.GET('/api/v1/markets/{market_id}/deals', {
    params: { path: { market_id: 'h2' } },
  });
  const key: string | undefined = menu?.deals[0].key;
  const { data: order } = await api.POST('/api/v1/orders', {
    body: { market: 'h2', offer_key: key!, qty: 1 },
  });
  const link: string | null | undefined = order?.purchase_url; // null once an order expired unfunded
  void link;
  // @ts-expect-error an order's qty is a number
  await api.POST('/api/v1/orders', { body: { market: 'h2', offer_key: 'k', qty: '1' } });
  // @ts-expect-error no such route
  await api.GET('/api/v1/nothing');
  // @ts-expect-error the deals of a market need its market_id
  await api.GET('/api/v1/markets/{market_id}/deals', { params: { path: {} } });
  const { data: cart } = await api.POST('/api/v1/cart/items', {
    body: { market: 'h2', offer_key: 'k', qty: 1, note: 'why' },
  });
  const checkout: string | undefined = cart?.checkout_url;
  void checkout;
}
