// The item families of core_v1. The table is fixed (it does not depend on SVC_SEED) and is part of
// the engine identity: editing any row is a new engine. `catalog()` is what GET /catalog serves;
// the economic parameters of a family stay inside the engine.

export const GRADES = ['new', 'like-new', 'grade-A', 'grade-B', 'grade-C'] as const;
export type Grade = (typeof GRADES)[number];

/** Cost and price of a bundle scale with the grade of its items (both alike, so grade moves the
 *  money amounts but not the margin ratio). */
export const GRADE_VALUE: Record<Grade, number> = {
  new: 1,
  'like-new': 0.9,
  'grade-A': 0.8,
  'grade-B': 0.66,
  'grade-C': 0.52,
};

export interface Addon {
  name: string;
  label: string;
  /** Multipliers on the bundle's landed cost and resale price. */
  cost_mult: number;
  price_mult: number;
}

export const ADDONS: readonly Addon[] = [
  { name: 'gift-wrap', label: 'Gift wrapping', cost_mult: 1.03, price_mult: 1.05 },
  { name: 'warranty-card', label: 'Extended warranty card', cost_mult: 1.06, price_mult: 1.08 },
  { name: 'retail-box', label: 'Retail box', cost_mult: 1.04, price_mult: 1.05 },
  { name: 'fast-prep', label: 'Fast prep and labelling', cost_mult: 1.05, price_mult: 1.04 },
  { name: 'multi-sleeve', label: 'Multi-pack sleeve', cost_mult: 1.02, price_mult: 1.03 },
];

export interface CatalogItem {
  name: string;
  /** Value of one piece relative to the family's standard item. */
  weight: number;
  grades: readonly Grade[];
}

export interface Family {
  cluster: number;
  sku_family: string;
  title: string;
  unit: string;
  origin: string;
  items: readonly CatalogItem[];
  addons: readonly string[];
  /** Landed cost of one standard item at level, cents. */
  cost_cents: number;
  /** Resale price level / landed cost level. */
  markup: number;
  /** Expected units per session of one listing on m15 at demand index 1 (scaled per market). */
  velocity: number;
  /** Stationary sd of the log demand index. */
  volatility: number;
  /** Probability that a deal of this family meets a downside regime within its horizon. */
  downside: number;
  /** Negative-binomial size of per-session demand (smaller = more overdispersed). */
  dispersion: number;
  /** Realised rate / quoted rate of this family: the quote is unbiased across families, not
   *  within one (a persistent quirk an analyst can learn from settled trades). */
  sell_through_bias: number;
  /** Typical number of sellers competing for the family's demand. */
  sellers: number;
  /** Relative share of the family on menus. */
  supply: number;
}

const ALL: readonly Grade[] = GRADES;
const USED: readonly Grade[] = ['like-new', 'grade-A', 'grade-B', 'grade-C'];
const NEWISH: readonly Grade[] = ['new', 'like-new', 'grade-A'];
const GRADED: readonly Grade[] = ['grade-A', 'grade-B', 'grade-C'];

type Row = [
  sku: string,
  title: string,
  unit: string,
  origin: string,
  items: Array<[string, number, readonly Grade[]]>,
  addons: string[],
  cost: number,
  markup: number,
  velocity: number,
  vol: number,
  downside: number,
  dispersion: number,
  bias: number,
  sellers: number,
  supply: number,
];

// prettier-ignore
const ROWS: Row[] = [
  ['usb-c-cables', 'USB-C Cables', 'pack', 'Shenzhen, CN', [['USB-C cable 1m', 1, ALL], ['USB-C cable 2m', 1.3, ALL], ['Braided USB-C cable', 1.6, NEWISH]], ['multi-sleeve', 'retail-box'], 250, 1.32, 1.04, 0.22, 0.03, 4.5, 0.97, 24, 1.6],
  ['phone-cases', 'Phone Cases', 'piece', 'Dongguan, CN', [['Silicone case', 1, ALL], ['Rugged case', 1.8, NEWISH], ['Wallet case', 1.5, ALL]], ['gift-wrap', 'retail-box'], 320, 1.36, 0.88, 0.3, 0.04, 3.5, 1.08, 20, 1.5],
  ['wireless-earbuds', 'Wireless Earbuds', 'pair', 'Shenzhen, CN', [['Earbuds basic', 1, ALL], ['Earbuds ANC', 2.2, NEWISH]], ['warranty-card', 'gift-wrap'], 1850, 1.3, 0.48, 0.35, 0.07, 2.5, 0.85, 14, 1.3],
  ['smart-watches', 'Smart Watches', 'piece', 'Shenzhen, CN', [['Fitness band', 0.6, ALL], ['Smart watch', 1, ALL], ['Smart watch LTE', 1.7, NEWISH]], ['warranty-card', 'retail-box'], 4200, 1.28, 0.24, 0.4, 0.09, 2.2, 0.78, 9, 1.0],
  ['power-banks', 'Power Banks', 'piece', 'Huizhou, CN', [['Power bank 10k', 1, ALL], ['Power bank 20k', 1.6, ALL], ['MagSafe pack', 1.4, NEWISH]], ['retail-box'], 1100, 1.3, 0.6, 0.25, 0.06, 3.2, 1.03, 16, 1.2],
  ['led-strips', 'LED Strips', 'roll', 'Zhongshan, CN', [['LED strip 5m', 1, ALL], ['RGB strip 10m', 1.7, ALL]], ['multi-sleeve'], 650, 1.38, 0.56, 0.38, 0.05, 2.8, 1.19, 12, 1.0],
  ['yoga-mats', 'Yoga Mats', 'piece', 'Ningbo, CN', [['Yoga mat 4mm', 1, ALL], ['Yoga mat 8mm', 1.3, ALL], ['Cork yoga mat', 1.9, NEWISH]], ['gift-wrap'], 900, 1.34, 0.4, 0.28, 0.04, 3.8, 1.0, 11, 0.9],
  ['water-bottles', 'Insulated Bottles', 'piece', 'Yongkang, CN', [['Bottle 500ml', 1, ALL], ['Bottle 1l', 1.35, ALL]], ['gift-wrap', 'multi-sleeve'], 520, 1.4, 0.72, 0.26, 0.03, 4.0, 0.93, 18, 1.3],
  ['kitchen-knives', 'Kitchen Knives', 'set', 'Yangjiang, CN', [['Chef knife', 1, NEWISH], ['Knife set 5pc', 2.6, NEWISH]], ['gift-wrap', 'retail-box'], 1600, 1.42, 0.28, 0.32, 0.06, 2.6, 1.15, 8, 0.8],
  ['coffee-grinders', 'Coffee Grinders', 'piece', 'Milan, IT', [['Hand grinder', 1, ALL], ['Burr grinder', 2.4, NEWISH]], ['warranty-card'], 2900, 1.3, 0.2, 0.36, 0.08, 2.3, 0.83, 7, 0.7],
  ['desk-lamps', 'Desk Lamps', 'piece', 'Xiamen, CN', [['LED desk lamp', 1, ALL], ['Clamp lamp', 0.8, ALL], ['Lamp with charger', 1.4, NEWISH]], ['retail-box'], 1250, 1.33, 0.36, 0.27, 0.05, 3.0, 1.0, 10, 0.9],
  ['mech-keyboards', 'Mechanical Keyboards', 'piece', 'Taipei, TW', [['TKL keyboard', 1, ALL], ['Full-size keyboard', 1.2, ALL], ['Wireless 75%', 1.6, NEWISH]], ['warranty-card', 'retail-box'], 3600, 1.29, 0.28, 0.42, 0.07, 2.0, 0.72, 9, 0.9],
  ['gaming-mice', 'Gaming Mice', 'piece', 'Suzhou, CN', [['Wired mouse', 1, ALL], ['Wireless mouse', 1.6, ALL]], ['retail-box'], 1400, 1.31, 0.44, 0.33, 0.05, 2.6, 1.12, 13, 1.0],
  ['monitor-arms', 'Monitor Arms', 'piece', 'Hangzhou, CN', [['Single arm', 1, USED], ['Dual arm', 1.7, USED]], ['fast-prep'], 2300, 1.35, 0.18, 0.3, 0.06, 2.8, 0.88, 6, 0.6],
  ['running-shoes', 'Running Shoes', 'pair', 'Ho Chi Minh City, VN', [['Road shoe', 1, ALL], ['Trail shoe', 1.15, ALL]], ['retail-box', 'gift-wrap'], 3100, 1.37, 0.32, 0.45, 0.08, 2.1, 1.23, 12, 1.0],
  ['backpacks', 'Backpacks', 'piece', 'Quanzhou, CN', [['Daypack', 1, ALL], ['Laptop backpack', 1.4, ALL], ['Travel pack 40l', 2.1, NEWISH]], ['gift-wrap'], 1700, 1.35, 0.38, 0.3, 0.05, 3.0, 0.96, 10, 1.0],
  ['sunglasses', 'Sunglasses', 'pair', 'Wenzhou, CN', [['Polarised shades', 1, ALL], ['Sport shades', 1.2, ALL]], ['gift-wrap', 'retail-box'], 600, 1.45, 0.64, 0.5, 0.06, 2.4, 1.31, 15, 1.1],
  ['board-games', 'Board Games', 'box', 'Nuremberg, DE', [['Family game', 1, NEWISH], ['Strategy game', 1.6, NEWISH], ['Party game', 0.7, NEWISH]], ['gift-wrap'], 1900, 1.33, 0.3, 0.48, 0.04, 2.2, 1.08, 8, 0.8],
  ['lego-compatible', 'Building Bricks', 'set', 'Shantou, CN', [['Brick set small', 1, ALL], ['Brick set large', 2.8, NEWISH]], ['gift-wrap', 'retail-box'], 1300, 1.39, 0.4, 0.44, 0.07, 2.3, 0.85, 11, 0.9],
  ['pet-beds', 'Pet Beds', 'piece', 'Nantong, CN', [['Cat bed', 1, ALL], ['Dog bed M', 1.5, ALL], ['Dog bed L', 2.1, ALL]], ['fast-prep'], 1500, 1.34, 0.26, 0.25, 0.04, 3.4, 1.0, 7, 0.7],
  ['skincare-sets', 'Skincare Sets', 'set', 'Seoul, KR', [['Serum set', 1, ['new']], ['Cleanser duo', 0.7, ['new']]], ['gift-wrap'], 1150, 1.48, 0.52, 0.46, 0.1, 2.0, 0.72, 17, 1.1],
  ['hair-dryers', 'Hair Dryers', 'piece', 'Foshan, CN', [['Compact dryer', 1, ALL], ['Ionic dryer', 1.9, NEWISH]], ['warranty-card'], 2100, 1.32, 0.28, 0.34, 0.07, 2.6, 0.93, 9, 0.8],
  ['e-readers', 'E-Readers', 'piece', 'Taipei, TW', [['E-reader 6in', 1, ALL], ['E-reader 7in warm', 1.35, ALL]], ['warranty-card', 'retail-box'], 6200, 1.24, 0.14, 0.3, 0.06, 2.8, 1.0, 6, 0.5],
  ['camera-lenses', 'Camera Lenses', 'piece', 'Tokyo, JP', [['Prime 50mm', 1, USED], ['Zoom 24-70', 3.2, USED]], ['warranty-card'], 9000, 1.25, 0.1, 0.38, 0.11, 2.0, 0.78, 5, 0.4],
  ['drone-parts', 'Drone Parts', 'kit', 'Shenzhen, CN', [['Propeller kit', 0.4, GRADED], ['Battery pack', 1, GRADED], ['Gimbal unit', 2.6, GRADED]], ['fast-prep'], 2600, 1.4, 0.22, 0.55, 0.12, 1.6, 1.4, 6, 0.6],
  ['bike-lights', 'Bike Lights', 'set', 'Taichung, TW', [['Front light', 1, ALL], ['Light set', 1.6, ALL]], ['multi-sleeve'], 700, 1.36, 0.48, 0.4, 0.04, 3.0, 1.09, 12, 0.9],
  ['tool-kits', 'Tool Kits', 'case', 'Jinhua, CN', [['Screwdriver kit', 1, ALL], ['Socket set', 2.2, ALL]], ['fast-prep', 'retail-box'], 1800, 1.3, 0.24, 0.2, 0.03, 4.5, 1.0, 8, 0.8],
  ['vinyl-records', 'Vinyl Records', 'piece', 'Prague, CZ', [['LP reissue', 1, ALL], ['Box set', 3.5, NEWISH]], ['gift-wrap'], 1700, 1.38, 0.2, 0.5, 0.05, 1.8, 1.28, 7, 0.6],
  ['graphics-cards', 'Graphics Cards', 'piece', 'Taoyuan, TW', [['Midrange GPU', 1, USED], ['High-end GPU', 2.4, USED]], ['warranty-card'], 26000, 1.22, 0.088, 0.55, 0.12, 1.7, 0.69, 8, 0.4],
  ['tea-sets', 'Tea Sets', 'set', 'Jingdezhen, CN', [['Teapot', 1, NEWISH], ['Tea set 6pc', 2.3, NEWISH]], ['gift-wrap', 'retail-box'], 1400, 1.44, 0.24, 0.3, 0.04, 2.8, 1.15, 6, 0.6],
  ['phone-refurb', 'Refurbished Phones', 'piece', 'Warsaw, PL', [['Phone 128GB', 1, USED], ['Phone 256GB', 1.2, USED]], ['warranty-card', 'retail-box'], 21000, 1.23, 0.16, 0.35, 0.1, 2.2, 0.88, 12, 0.5],
  ['scented-candles', 'Scented Candles', 'set', 'Kraków, PL', [['Candle single', 1, ['new']], ['Candle trio', 2.5, ['new']]], ['gift-wrap', 'multi-sleeve'], 450, 1.46, 0.56, 0.42, 0.03, 2.6, 1.03, 14, 1.0],
];

export const FAMILIES: readonly Family[] = Object.freeze(
  ROWS.map((r, cluster): Family =>
    Object.freeze({
      cluster,
      sku_family: r[0],
      title: r[1],
      unit: r[2],
      origin: r[3],
      items: r[4].map(([name, weight, grades]) => ({ name, weight, grades })),
      addons: r[5],
      cost_cents: r[6],
      markup: r[7],
      velocity: r[8],
      volatility: r[9],
      downside: r[10],
      dispersion: r[11],
      sell_through_bias: r[12],
      sellers: r[13],
      supply: r[14],
    }),
  ),
);

export function familyByCluster(cluster: number): Family {
  const f = FAMILIES[cluster];
  if (!f) throw new RangeError(`unknown cluster ${cluster}`);
  return f;
}

export interface CatalogResponse {
  families: Array<{
    cluster: number;
    sku_family: string;
    title: string;
    unit: string;
    origin: string;
    items: Array<{ name: string; grades: string[] }>;
    addons: string[];
  }>;
  addons: Array<{ name: string; label: string }>;
  grades: string[];
}

const CATALOG_JSON = JSON.stringify({
  families: FAMILIES.map((f) => ({
    cluster: f.cluster,
    sku_family: f.sku_family,
    title: f.title,
    unit: f.unit,
    origin: f.origin,
    items: f.items.map((i) => ({ name: i.name, grades: [...i.grades] })),
    addons: [...f.addons],
  })),
  addons: ADDONS.map((a) => ({ name: a.name, label: a.label })),
  grades: [...GRADES],
} satisfies CatalogResponse);

/** What GET /catalog serves (a fresh copy each call; no internal parameters). */
export function catalog(): CatalogResponse {
  return JSON.parse(CATALOG_JSON) as CatalogResponse;
}
