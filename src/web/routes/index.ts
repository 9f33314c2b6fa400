// The holder's web pages (HTML, form posts): account, purchase and cart links, carts, console.
import type { Route } from '../../http/route.js';
import type { Services } from '../../http/services.js';
import { webHolderRoutes } from './holders.js';
import { webCheckoutRoutes } from './checkout.js';
import { webConsoleRoutes } from './console.js';
import { webCartRoutes } from './carts.js';
import { webCartPageRoutes } from './cart.js';
import { webSiteRoutes } from './site.js';
import { webMarketRoutes } from './markets.js';
import { webExploreRoutes } from './explore.js';
import { webAssetRoutes } from './assets.js';
import { assetRoute } from '../pages.js';

export function webRoutes(s: Services): Route[] {
  return [
    ...webHolderRoutes(s),
    ...webCheckoutRoutes(s),
    ...webConsoleRoutes(s),
    ...webCartRoutes(s),
    ...webCartPageRoutes(s),
    ...webSiteRoutes(s),
    ...webMarketRoutes(s),
    ...webExploreRoutes(s),
    ...webAssetRoutes(s),
    assetRoute(),
  ];
}
