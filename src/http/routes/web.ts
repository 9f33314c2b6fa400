// The holder's web pages (HTML, form posts): account, purchase and cart links, carts, console.
import type { Route } from '../route.js';
import type { Services } from '../services.js';
import { webHolderRoutes } from './web-holders.js';
import { webCheckoutRoutes } from './web-checkout.js';
import { webConsoleRoutes } from './web-console.js';
import { webCartRoutes } from './web-carts.js';
import { webCartPageRoutes } from './web-cart.js';
import { webSiteRoutes } from './web-site.js';
import { webMarketRoutes } from './web-markets.js';
import { webExploreRoutes } from './web-explore.js';
import { webAssetRoutes } from './web-assets.js';
import { assetRoute } from '../pages.js';

export function webRoutes(s: Services): Route[] {
  return [
    ...webHolderRoutes(s), ...webCheckoutRoutes(s), ...webConsoleRoutes(s), ...webCartRoutes(s), ...webCartPageRoutes(s),
    ...webSiteRoutes(s), ...webMarketRoutes(s), ...webExploreRoutes(s), ...webAssetRoutes(s), assetRoute(),
  ];
}
