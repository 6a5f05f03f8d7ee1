/**
 * What a username looks like, for the reserved names and the script rules (docs/rules.md#usernames;
 * reasons in docs/decisions.md "Identity and sessions"), after Unicode Technical Standard #39
 * (Unicode Security Mechanisms).
 *
 * `withoutIgnorables`: the text without its default-ignorable code points (combining grapheme joiner,
 * variation selectors, Hangul fillers, zero-width characters): they show nothing, and UTS #39's skeleton
 * removes them first. Some are combining marks (Mn), so removing control and format characters misses them.
 *
 * `skeleton`: the UTS #39 skeleton for the letters that pass for Latin ones, without letter case. No
 * maintained npm package computes the UTS #39 skeleton, and the whole confusables table (6 000 and more
 * entries) would judge a handful of reserved words; so the table below is the part of it that maps
 * letters of Cyrillic and Greek (the recommended scripts with Latin look-alikes), Latin small capitals
 * and the digits 0 and 1 to Latin letters. Fullwidth and mathematical letters need no entry: usernames
 * are NFKC-normalized before (NFKC makes `ａｄｍｉｎ` and `𝐚𝐝𝐦𝐢𝐧` `admin`).
 *
 * `lookKey`: the skeleton with every letter like a stroke (`i`, `l`, and so `I`, `1`, `ı`, `İ`, `ǀ`, `ɪ`,
 * `ʟ`, Cyrillic `і`, `ӏ`, Greek `ι`) one letter, `l`. UTS #39 maps `I` and `1` to `l` but keeps `i`;
 * lower-casing first (the skeleton's letter case is ignored) would lose `I` = `l`, and `admln` reads
 * as `admin` anyway. The reserved names are compared on this key.
 *
 * `isSingleScript`: the UTS #39 single-script test (section 5.1): the intersection of the characters'
 * Script_Extensions, augmented so that Han with Hiragana and Katakana (Japanese), Han with Hangul
 * (Korean) and Han with Bopomofo (Chinese) count as one script, is not empty. Characters of Common
 * (digits, `.`, `_`, `-`) and Inherited (combining marks) count for every script.
 *
 * `isRecommendedSingleScript`: single-script, and that script one of UTS #39's recommended scripts
 * (UAX #31 Table 5, the scripts whose characters have Identifier_Status Allowed): a letter of any other
 * script (Lisu, Cherokee, Runic, ...) fails it. Their letters are in no table here, and Lisu's or
 * Cherokee's pass for Latin capitals (`ꓮꓓꓟꓲꓠ`).
 */

/** Default-ignorable code points: shown as nothing (UTS #39 removes them before the skeleton). */
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/gu

/** The text without its default-ignorable code points. */
export const withoutIgnorables = (text: string): string => text.replace(IGNORABLE, "")

/** Characters that pass for a Latin letter, and that letter in lower case (UTS #39 confusables, in part). */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  // Latin: digits, dotless and other variant letters, small capitals.
  "0": "o", "1": "l", "ı": "i", "ɩ": "i", "ǀ": "l", "ɑ": "a", "ɡ": "g",
  "ᴀ": "a", "ʙ": "b", "ᴄ": "c", "ᴅ": "d", "ᴇ": "e", "ꜰ": "f", "ɢ": "g", "ʜ": "h", "ɪ": "i", "ᴊ": "j",
  "ᴋ": "k", "ʟ": "l", "ᴍ": "m", "ɴ": "n", "ᴏ": "o", "ᴘ": "p", "ʀ": "r", "ꜱ": "s", "ᴛ": "t", "ᴜ": "u",
  "ᴠ": "v", "ᴡ": "w", "ʏ": "y", "ᴢ": "z", "Ɩ": "l",
  // Cyrillic.
  "а": "a", "А": "a", "в": "b", "В": "b", "ь": "b", "Ь": "b", "с": "c", "С": "c", "ԁ": "d", "е": "e",
  "Е": "e", "ԍ": "g", "Ԍ": "g", "һ": "h", "н": "h", "Н": "h", "і": "i", "І": "i", "ӏ": "l", "Ӏ": "l",
  "ј": "j", "Ј": "j", "к": "k", "К": "k", "м": "m", "М": "m", "п": "n", "о": "o", "О": "o", "р": "p",
  "Р": "p", "ԛ": "q", "Ԛ": "q", "г": "r", "ѕ": "s", "Ѕ": "s", "т": "t", "Т": "t", "ц": "u", "ѵ": "v",
  "Ѵ": "v", "ԝ": "w", "Ԝ": "w", "х": "x", "Х": "x", "у": "y", "У": "y", "ү": "y", "Ү": "y",
  // Greek.
  "α": "a", "Α": "a", "Β": "b", "ϲ": "c", "Ϲ": "c", "Ε": "e", "Η": "h", "ι": "i", "Ι": "i", "ϳ": "j",
  "κ": "k", "Κ": "k", "Μ": "m", "π": "n", "Ν": "n", "ν": "v", "ο": "o", "Ο": "o", "σ": "o", "ρ": "p",
  "Ρ": "p", "τ": "t", "Τ": "t", "υ": "u", "Υ": "y", "γ": "y", "χ": "x", "Χ": "x", "Ζ": "z"
}

const lookAlikes = new Map(Object.entries(LOOK_ALIKES))

/**
 * The skeleton of a name: without default-ignorable code points, decomposed (NFD), each look-alike
 * replaced by its Latin letter, every other character in lower case; then, as UTS #39 does, `m`
 * written `rn` and `w` written `vv`. Two names with one skeleton look alike.
 */
export const skeleton = (text: string): string =>
  Array.from(withoutIgnorables(text).normalize("NFD"), (character) => lookAlikes.get(character) ?? character.toLowerCase())
    .join("")
    .normalize("NFD")
    .replace(/m/g, "rn")
    .replace(/w/g, "vv")

/**
 * The skeleton with `i` and `l` one letter, `l` (a dot above after either dropped: `İ` is `I` and a
 * dot, `ı` with a dot is `i`): `admln`, `ADMlN`, `adm1n`, `ADMİN` and `admin` have one key.
 */
export const lookKey = (text: string): string => skeleton(text).replace(/[il]\u0307?/g, "l")

/**
 * ISO 15924 codes of the Unicode scripts (Unicode 17; Common, Inherited and Unknown left out). A
 * character of a script added later matches none of them and so never makes a single script.
 */
const SCRIPTS = (
  "Adlm Aghb Ahom Arab Armi Armn Avst Bali Bamu Bass Batk Beng Berf Bhks Bopo Brah Brai Bugi Buhd Cakm " +
  "Cans Cari Cham Cher Chrs Copt Cpmn Cprt Cyrl Deva Diak Dogr Dsrt Dupl Egyp Elba Elym Ethi Gara Geor " +
  "Glag Gong Gonm Goth Gran Grek Gujr Gukh Guru Hang Hani Hano Hatr Hebr Hira Hluw Hmng Hmnp Hung Ital " +
  "Java Kali Kana Kawi Khar Khmr Khoj Kits Knda Krai Kthi Lana Laoo Latn Lepc Limb Lina Linb Lisu Lyci " +
  "Lydi Mahj Maka Mand Mani Marc Medf Mend Merc Mero Miao Mlym Modi Mong Mroo Mtei Mult Mymr Nagm Nand " +
  "Narb Nbat Newa Nkoo Nshu Ogam Olck Onao Orkh Orya Osge Osma Ougr Palm Pauc Perm Phag Phli Phlp Phnx " +
  "Prti Rjng Rohg Runr Samr Sarb Saur Sgnw Shaw Shrd Sidd Sidt Sind Sinh Sogd Sogo Sora Soyo Sund Sunu " +
  "Sylo Syrc Tagb Takr Tale Talu Taml Tang Tavt Tayo Telu Tfng Tglg Thaa Thai Tibt Tirh Tnsa Todr Tols " +
  "Toto Tutg Ugar Vaii Vith Wara Wcho Xpeo Xsux Yezi Yiii Zanb"
).split(" ").flatMap((code) => {
  try {
    return [{ code, pattern: new RegExp(`^\\p{Script_Extensions=${code}}$`, "u") }]
  } catch {
    return [] // a script this runtime's Unicode does not know has no characters here either
  }
})

/** UTS #39's augmented script sets: the writing systems that mix Han with other scripts. */
const AUGMENTED: Readonly<Record<string, ReadonlyArray<string>>> = {
  Hani: ["Hanb", "Jpan", "Kore"],
  Hira: ["Jpan"],
  Kana: ["Jpan"],
  Hang: ["Kore"],
  Bopo: ["Hanb"]
}

/** Characters that belong to every script: Script_Extensions Common or Inherited. */
const ANY_SCRIPT = /^[\p{Script_Extensions=Common}\p{Script_Extensions=Inherited}]$/u

const scriptsOf = (character: string): Set<string> => {
  const scripts = new Set<string>()
  for (const { code, pattern } of SCRIPTS) {
    if (!pattern.test(character)) continue
    scripts.add(code)
    for (const augmented of AUGMENTED[code] ?? []) scripts.add(augmented)
  }
  return scripts
}

/**
 * UTS #39's recommended scripts (UAX #31 Table 5; Common and Inherited are in ANY_SCRIPT), with the
 * writing systems they make together.
 */
const RECOMMENDED: ReadonlySet<string> = new Set([
  "Arab", "Armn", "Beng", "Bopo", "Cyrl", "Deva", "Ethi", "Geor", "Grek", "Gujr", "Guru", "Hang", "Hani",
  "Hebr", "Hira", "Kana", "Knda", "Khmr", "Laoo", "Latn", "Mlym", "Mymr", "Orya", "Sinh", "Taml", "Telu",
  "Thaa", "Thai", "Tibt", "Hanb", "Jpan", "Kore"
])

/** The scripts every character of the text belongs to (undefined: only Common and Inherited ones). */
const sharedScripts = (text: string): Set<string> | undefined => {
  let shared: Set<string> | undefined
  for (const character of text) {
    if (ANY_SCRIPT.test(character)) continue
    const scripts = scriptsOf(character)
    shared = shared === undefined ? scripts : new Set([...shared].filter((script) => scripts.has(script)))
    if (shared.size === 0) return shared
  }
  return shared
}

/** Whether the text is written in one script (UTS #39 single-script; Common and Inherited count for any). */
export const isSingleScript = (text: string): boolean => sharedScripts(text)?.size !== 0

/** Whether the text is written in one script, and that one recommended (UAX #31 Table 5). */
export const isRecommendedSingleScript = (text: string): boolean => {
  const shared = sharedScripts(text)
  return shared === undefined || [...shared].some((script) => RECOMMENDED.has(script))
}
