/**
 * The demo catalog (docs/rules.md#demo-catalog): loaded by `npm run seed`, and by `npm start` when the catalog
 * is empty, so a fresh install has something to open. Item names are made up; values are in BRL cents. Each case pays
 * back 87 to 89 % of its price on average, FLIP included: within the default house edge of 10 %
 * (docs/rules.md#house-edge-rule; test/services/CaseEconomics.test.ts checks it).
 */
import type { CaseCategory, Rarity } from "../../schema/games/Catalog"

interface DemoItem {
  readonly name: string
  readonly rarity: Rarity
  readonly valueCents: bigint
  readonly isUpgradable: boolean
}

interface DemoCase {
  readonly name: string
  readonly slug: string
  readonly description: string
  readonly priceCents: bigint
  /** Only EVENT is given; the other categories follow from the price (docs/rules.md#case-categories). */
  readonly category?: Extract<CaseCategory, "EVENT">
  readonly isFeatured: boolean
  readonly flipChance: number
  /** Item names (of `items`) with their drop chances, adding up to 1. */
  readonly items: ReadonlyArray<readonly [name: string, dropChance: number]>
}

/** A name in URL form: `Pistol | Sand Dune` -> `pistol-sand-dune`. */
export const slugOf = (name: string): string => name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "")

/**
 * Where the service serves a demo item's or case's image (src/http/platform/DemoImages.ts,
 * docs/rules.md#demo-images): a path on this site, so the demo catalog shows no broken image.
 */
export const demoImagePath = (kind: "items" | "cases", slug: string): string => `/images/demo/${kind}/${slug}.svg`

const item = (name: string, rarity: Rarity, valueCents: number, isUpgradable = true): DemoItem => ({
  name,
  rarity,
  valueCents: BigInt(valueCents),
  isUpgradable
})

export const demoItems: ReadonlyArray<DemoItem> = [
  item("Pistol | Sand Dune", "CONSUMER", 12),
  item("SMG | Urban Grey", "CONSUMER", 18),
  item("Shotgun | Forest Leaves", "CONSUMER", 25),
  item("Rifle | Desert Tan", "CONSUMER", 35),
  item("Sniper | Safari Mesh", "CONSUMER", 45),
  item("Pistol | Night Ops", "CONSUMER", 60),
  item("SMG | Boreal Forest", "CONSUMER", 80),
  item("Rifle | Blue Steel", "INDUSTRIAL", 120),
  item("Pistol | Copper Wire", "INDUSTRIAL", 150),
  item("Shotgun | Rust Coat", "INDUSTRIAL", 190),
  item("SMG | Carbon Weave", "INDUSTRIAL", 240),
  item("Sniper | Arctic Fog", "INDUSTRIAL", 300),
  item("Rifle | Jungle Tiger", "INDUSTRIAL", 380),
  item("Pistol | Candy Apple", "INDUSTRIAL", 450),
  item("SMG | Neon Pulse", "MIL_SPEC", 700),
  item("Rifle | Samba Stripes", "MIL_SPEC", 900),
  item("Pistol | Ipanema Wave", "MIL_SPEC", 1_100),
  item("Shotgun | Copacabana", "MIL_SPEC", 1_300),
  item("Sniper | Amazon Canopy", "MIL_SPEC", 1_600),
  item("Rifle | Favela Graffiti", "MIL_SPEC", 2_000),
  item("SMG | Tropical Storm", "MIL_SPEC", 2_500),
  item("Pistol | Golden Arara", "RESTRICTED", 4_000),
  item("Rifle | Sugarloaf Sunset", "RESTRICTED", 5_500),
  item("Sniper | Pantanal Jaguar", "RESTRICTED", 7_000),
  item("SMG | Electric Frevo", "RESTRICTED", 8_500),
  item("Rifle | Neon Carnival", "RESTRICTED", 11_000),
  item("Shotgun | Iron Toucan", "RESTRICTED", 13_000),
  item("Rifle | Crimson Web", "CLASSIFIED", 22_000),
  item("Sniper | Dragon Scale", "CLASSIFIED", 30_000),
  item("Pistol | Fire Serpent", "CLASSIFIED", 38_000),
  item("Rifle | Hyper Beast", "CLASSIFIED", 52_000),
  item("SMG | Cyber Samurai", "CLASSIFIED", 65_000),
  item("Pistol | Blaze Orange", "COVERT", 90_000),
  item("Rifle | Emerald Dragon", "COVERT", 120_000),
  item("Rifle | Wild Lotus", "COVERT", 180_000),
  item("Sniper | Royal Lion", "COVERT", 250_000),
  item("Sniper | Medusa Gaze", "COVERT", 320_000),
  item("Knife | Fade", "EXTRAORDINARY", 450_000),
  item("Gloves | Emerald Web", "EXTRAORDINARY", 900_000),
  // The rarest prize is the top of the upgrade ladder: nothing is worth staking it for.
  item("Knife | Sapphire Doppler", "EXTRAORDINARY", 1_200_000, false)
]

export const demoCases: ReadonlyArray<DemoCase> = [
  {
    name: "Starter Case",
    slug: "starter",
    description: "Cheap everyday skins with a small shot at a classified.",
    priceCents: 75n,
    isFeatured: true,
    flipChance: 0,
    items: [
      ["Pistol | Sand Dune", 0.3],
      ["SMG | Urban Grey", 0.25],
      ["Shotgun | Forest Leaves", 0.2],
      ["Rifle | Desert Tan", 0.12],
      ["Rifle | Blue Steel", 0.07],
      ["Pistol | Copper Wire", 0.04],
      ["SMG | Neon Pulse", 0.015],
      ["Pistol | Golden Arara", 0.0049],
      ["Pistol | Fire Serpent", 0.0001]
    ]
  },
  {
    name: "Street Case",
    slug: "street",
    description: "Industrial grade favourites and a restricted rifle or two.",
    priceCents: 479n,
    isFeatured: false,
    flipChance: 0.05,
    items: [
      ["Pistol | Night Ops", 0.22],
      ["SMG | Boreal Forest", 0.2],
      ["Shotgun | Rust Coat", 0.18],
      ["SMG | Carbon Weave", 0.15],
      ["Sniper | Arctic Fog", 0.12],
      ["Rifle | Samba Stripes", 0.07],
      ["Pistol | Ipanema Wave", 0.035],
      ["Rifle | Sugarloaf Sunset", 0.0185],
      ["Sniper | Pantanal Jaguar", 0.005],
      ["Rifle | Crimson Web", 0.0015]
    ]
  },
  {
    name: "Carnaval Case",
    slug: "carnaval",
    description: "Limited event case: samba colours, frevo neon and a rare covert.",
    priceCents: 1_690n,
    category: "EVENT",
    isFeatured: true,
    flipChance: 0.1,
    items: [
      ["Rifle | Jungle Tiger", 0.3],
      ["Pistol | Candy Apple", 0.25],
      ["Rifle | Samba Stripes", 0.2],
      ["Shotgun | Copacabana", 0.12],
      ["Rifle | Favela Graffiti", 0.07],
      ["SMG | Electric Frevo", 0.035],
      ["Rifle | Neon Carnival", 0.02],
      ["Sniper | Dragon Scale", 0.0045],
      ["Pistol | Blaze Orange", 0.0005]
    ]
  },
  {
    name: "Midnight Case",
    slug: "midnight",
    description: "Mil-spec finishes with a real chance at a classified.",
    priceCents: 2_350n,
    isFeatured: false,
    flipChance: 0.05,
    items: [
      ["SMG | Neon Pulse", 0.25],
      ["Rifle | Samba Stripes", 0.22],
      ["Pistol | Ipanema Wave", 0.18],
      ["Sniper | Amazon Canopy", 0.15],
      ["SMG | Tropical Storm", 0.1],
      ["Pistol | Golden Arara", 0.05],
      ["Rifle | Sugarloaf Sunset", 0.03],
      ["Shotgun | Iron Toucan", 0.013],
      ["Rifle | Hyper Beast", 0.006],
      ["Rifle | Emerald Dragon", 0.001]
    ]
  },
  {
    name: "Vault Case",
    slug: "vault",
    description: "Restricted and classified skins, with the knives kept at the back.",
    priceCents: 12_190n,
    isFeatured: true,
    flipChance: 0.08,
    items: [
      ["Pistol | Golden Arara", 0.3],
      ["Rifle | Sugarloaf Sunset", 0.25],
      ["Sniper | Pantanal Jaguar", 0.17],
      ["SMG | Electric Frevo", 0.12],
      ["Rifle | Neon Carnival", 0.07],
      ["Rifle | Crimson Web", 0.045],
      ["Sniper | Dragon Scale", 0.025],
      ["SMG | Cyber Samurai", 0.012],
      ["Rifle | Wild Lotus", 0.005],
      ["Knife | Fade", 0.003]
    ]
  },
  {
    name: "Elite Case",
    slug: "elite",
    description: "Classified and covert only, and the best odds on gloves and knives.",
    priceCents: 59_900n,
    isFeatured: false,
    flipChance: 0.1,
    items: [
      ["Rifle | Crimson Web", 0.3],
      ["Sniper | Dragon Scale", 0.25],
      ["Pistol | Fire Serpent", 0.18],
      ["Rifle | Hyper Beast", 0.1],
      ["SMG | Cyber Samurai", 0.07],
      ["Pistol | Blaze Orange", 0.04],
      ["Rifle | Emerald Dragon", 0.025],
      ["Sniper | Royal Lion", 0.015],
      ["Sniper | Medusa Gaze", 0.01],
      ["Knife | Fade", 0.006],
      ["Gloves | Emerald Web", 0.003],
      ["Knife | Sapphire Doppler", 0.001]
    ]
  }
]
