/**
 * Users at sign-in, their usernames, and the grant-admin command (docs/rules.md#usernames,
 * docs/rules.md#admin-roles).
 */
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { AppConfig } from "../../src/layers/AppConfig"
import { Randomness } from "../../src/layers/Randomness"
import { isSingleScript, skeleton } from "../../src/schema/identity/Confusables"
import { usernameCandidates, usernameFromClaim } from "../../src/schema/identity/User"
import { Users } from "../../src/services/identity/Users"
import { testConfig } from "../support/TestApp"
import { TestDatabase } from "../support/TestDatabase"

const config = Layer.succeed(AppConfig, { ...testConfig, adminIdpIds: ["boss-sub"] })

const Services = Users.Default.pipe(Layer.provide(Layer.merge(Randomness.seeded("users"), config)), Layer.provideMerge(TestDatabase))

layer(Services)("Users", (it) => {
  it.effect("the first sign-in creates the user; later ones keep the name and never demote", () =>
    Effect.gen(function*() {
      const users = yield* Users
      const first = yield* users.signIn({ idpId: "sub-1", username: "Ana", promote: false })
      const renamed = yield* users.signIn({ idpId: "sub-1", username: "Ana Maria", promote: true })
      expect(renamed).toMatchObject({ id: first.id, username: "Ana", role: "ADMIN" })
      expect((yield* users.signIn({ idpId: "sub-1", username: "Ana", promote: false })).role).toBe("ADMIN")
      const nameless = yield* users.signIn({ idpId: "sub-2", username: undefined, promote: false })
      expect(nameless.username).toBe(`user-${nameless.id}`)
    }))

  it.effect("an identity listed in ADMIN_IDP_IDS signs in as an ADMIN, any other as a USER", () =>
    Effect.gen(function*() {
      const users = yield* Users
      expect((yield* users.signInWith({ idpId: "boss-sub", username: "Boss" })).role).toBe("ADMIN")
      expect((yield* users.signInWith({ idpId: "player-sub", username: "Player" })).role).toBe("USER")
    }))

  it.effect("grant-admin finds the user by id or by idpId", () =>
    Effect.gen(function*() {
      const users = yield* Users
      const byIdp = yield* users.signIn({ idpId: "carla", username: "carla", promote: false })
      expect((yield* users.grantAdmin("carla")).role).toBe("ADMIN")
      const byId = yield* users.signIn({ idpId: "sub-42", username: "joao", promote: false })
      expect((yield* users.grantAdmin(String(byId.id))).role).toBe("ADMIN")
      const unknown = yield* Effect.flip(users.grantAdmin("nobody"))
      expect(unknown).toMatchObject({ _tag: "NotFound", message: "User not found" })
      expect(byIdp.role).toBe("USER")
    }))

  it.effect("a provider's name is made valid and unique, ignoring letter case", () =>
    Effect.gen(function*() {
      const users = yield* Users
      const first = yield* users.signIn({ idpId: "sub-maria-1", username: "Maria Silva", promote: false })
      expect(first.username).toBe("Maria_Silva")
      const second = yield* users.signIn({ idpId: "sub-maria-2", username: "maria silva", promote: false })
      expect(second.username).toBe(`maria_silva-${second.id}`)
      const third = yield* users.signIn({ idpId: "sub-maria-3", username: `MARIA_SILVA-${second.id}`, promote: false })
      expect(third.username).toBe(`MARIA_SILVA-${second.id}-${third.id}`)
      // Impersonation and the fallback's form are never taken as given.
      const admin = yield* users.signIn({ idpId: "sub-admin", username: "Admin", promote: false })
      expect(admin.username).toBe(`Admin-${admin.id}`)
      const fake = yield* users.signIn({ idpId: "sub-fake", username: "user-1", promote: false })
      expect(fake.username).toBe(`user-1-${fake.id}`)
      const unusable = yield* users.signIn({ idpId: "sub-blank", username: "\u200b\u202e!!", promote: false })
      expect(unusable.username).toBe(`user-${unusable.id}`)
    }))

  it.effect("parallel first sign-ins with one name: every user gets a different name", () =>
    Effect.gen(function*() {
      const users = yield* Users
      const signedIn = yield* Effect.all(
        Array.from({ length: 8 }, (_, i) => users.signIn({ idpId: `sub-twin-${i}`, username: "Twin", promote: false })),
        { concurrency: "unbounded" }
      )
      const names = signedIn.map((u) => u.username.toLowerCase())
      expect(new Set(names).size).toBe(8)
      expect(names.filter((n) => n === "twin")).toHaveLength(1)
      // The same identity signing in twice at once is one user with one name.
      const same = yield* Effect.all(
        Array.from({ length: 4 }, () => users.signIn({ idpId: "sub-once", username: "Once", promote: false })),
        { concurrency: "unbounded" }
      )
      expect(new Set(same.map((u) => `${u.id}:${u.username}`)).size).toBe(1)
    }))
})

describe("username rules", () => {
  it("cleans a provider's name: letters, digits, . _ -, 3 to 32 characters", () => {
    expect(usernameFromClaim("maria.silva")).toBe("maria.silva")
    expect(usernameFromClaim("  João  da   Silva ")).toBe("João_da_Silva")
    expect(usernameFromClaim("ｆｕｌｌｗｉｄｔｈ")).toBe("fullwidth")
    expect(usernameFromClaim("zero\u200bwidth\u202eright-to-left")).toBe("zerowidthright-to-left")
    expect(usernameFromClaim("<script>alert(1)</script>")).toBe("scriptalert1script")
    expect(usernameFromClaim("a__..--b")).toBe("a_b")
    expect(usernameFromClaim("--edge--")).toBe("edge")
    // Stacked marks: composed where Unicode can (z + acute = ź), then one mark at most.
    expect(usernameFromClaim(`z${"\u0301\u0302\u0303\u0304".repeat(20)}algo`)).toBe("\u017a\u0302algo")
    expect(usernameFromClaim("x".repeat(40))).toBe("x".repeat(32))
    expect(usernameFromClaim("ab")).toBeUndefined()
    expect(usernameFromClaim("!!!")).toBeUndefined()
    expect(usernameFromClaim("\u0000\u0001abc")).toBe("abc")
  })

  it("candidates: the name, the name with the id, user-<id>; reserved names only with the id", () => {
    expect(usernameCandidates("Ana", 7n)).toEqual(["Ana", "Ana-7", "user-7"])
    expect(usernameCandidates("support", 7n)).toEqual(["support-7", "user-7"])
    expect(usernameCandidates(undefined, 7n)).toEqual(["user-7"])
    expect(usernameCandidates("y".repeat(32), 123456n)).toEqual(["y".repeat(32), `${"y".repeat(25)}-123456`, "user-123456"])
  })

  it("reserved names are matched on their look (the UTS #39 skeleton), whatever the letter case", () => {
    // Cyrillic (аԁміп, ЅУЅТЕМ), Latin small capitals, 0 for o, rn for m, l and o for 1 and 0.
    for (const name of ["ADMIN", "\u0430\u0501\u043c\u0456\u043f", "\u0405\u0423\u0405\u0422\u0415\u041c",
      "\u1d00\u1d05\u1d0d\u026a\u0274", "m0d", "adrnin", "Staff", "user-l0", "USER-12"]) {
      expect(usernameCandidates(name, 7n), name).toEqual([`${name}-7`, "user-7"])
    }
    expect(usernameCandidates("administrators", 7n)[0]).toBe("administrators")
    expect(skeleton("\u0430dmin")).toBe(skeleton("admin"))
    expect(skeleton("\u0455\u0440\u0435\u0441\u0456al")).toBe(skeleton("special"))
  })

  it("invisible marks (default-ignorable code points) are removed before anything else, so they hide no reserved name", () => {
    // Combining grapheme joiner, a variation selector, a variation selector supplement: all category Mn.
    for (const name of ["adm\u034fin", "admi\ufe0fn", "adm\u{e0100}in", "\u115fad\u3164min\uffa0"]) {
      expect(usernameFromClaim(name), name).toBe("admin")
      expect(usernameCandidates(name, 7n), name).toEqual(["admin-7", "user-7"])
      expect(skeleton(name), name).toBe(skeleton("admin"))
    }
    expect(usernameFromClaim("Jo\u034fa\u0303o")).toBe("Jo\u00e3o")
  })

  it("i, l, I, 1 and their look-alikes (ı, İ, ǀ, Ɩ, ɪ, ʟ) are one letter when names are compared with the reserved ones", () => {
    for (const name of ["admln", "ADMlN", "adm1n", "ADM\u0130N", "adm\u0131n", "adm\u01c0n", "adm\u0196n",
      "\u1d00\u1d05\u1d0d\u029fn", "offic1a1", "0FFICIAI", "user-ll", "user-I0"]) {
      expect(usernameCandidates(name, 7n), name).toEqual([`${name}-7`, "user-7"])
    }
    expect(usernameCandidates("Ilda", 7n)).toEqual(["Ilda", "Ilda-7", "user-7"])
    expect(usernameCandidates("adm1ns", 7n)[0]).toBe("adm1ns")
  })

  it("a name with a letter of a script UTS #39 does not recommend (Lisu, Cherokee, ...) is refused (user-<id>)", () => {
    // Lisu ADMIN, SYSTEM, SUPPORT, STAFF, USER-12; Cherokee SYSTEM; Runic; Tifinagh.
    for (const name of ["\ua4ee\ua4d3\ua4df\ua4f2\ua4e0", "\ua4e2\ua4ec\ua4e2\ua4d4\ua4f0\ua4df",
      "\ua4e2\ua4f4\ua4d1\ua4d1\ua4f3\ua4e3\ua4d4", "\ua4e2\ua4d4\ua4ee\ua4dd\ua4dd", "\ua4f4\ua4e2\ua4f0\ua4e3-12",
      "\u13da\u13a9\u13da\u13a2\u13ac\u13b7", "\u16a0\u16a2\u16a6", "\u2d30\u2d37\u2d4e"]) {
      expect(usernameFromClaim(name), name).toBeUndefined()
      expect(usernameCandidates(name, 7n), name).toEqual(["user-7"])
    }
    // Recommended scripts are kept: Thai, Hebrew, Arabic, Devanagari, Armenian, Georgian, Hangul, Ethiopic, Bopomofo.
    for (const name of ["\u0e2a\u0e21\u0e0a\u0e32\u0e22", "\u05d3\u05d5\u05d3", "\u0645\u062d\u0645\u062f",
      "\u0926\u0947\u0935_1", "\u0531\u0580\u0561", "\u10dc\u10d8\u10dc\u10dd", "\ubbfc\uc218\uc9c0",
      "\u12a0\u1260\u1260", "\u3105\u3106\u3107"]) {
      expect(usernameFromClaim(name), name).toBe(name)
    }
  })

  it("a name mixing scripts is refused (user-<id>); digits, . _ - and combining marks belong to any script", () => {
    expect(usernameFromClaim("\u0430dmin")).toBeUndefined()
    expect(usernameCandidates("\u0430dmin", 7n)).toEqual(["user-7"])
    expect(usernameFromClaim("Pa\u0443Pal")).toBeUndefined()
    expect(usernameFromClaim("\u0391lpha")).toBeUndefined()
    expect(usernameFromClaim("Taro\u5c71\u7530")).toBeUndefined()
    expect(usernameFromClaim("\u0418\u0432\u0430\u043d_1990")).toBe("\u0418\u0432\u0430\u043d_1990")
    expect(usernameFromClaim("\u0395\u03bb\u03ad\u03bd\u03b7")).toBe("\u0395\u03bb\u03ad\u03bd\u03b7")
    expect(usernameFromClaim("Jo\u00e3o.da-Silva_2")).toBe("Jo\u00e3o.da-Silva_2")
    expect(usernameFromClaim("e\u0301e\u0301e\u0301")).toBe("\u00e9\u00e9\u00e9")
    // One writing system of several scripts (UTS #39): Japanese, Korean with Han.
    expect(isSingleScript("\u5c71\u7530\u305f\u308d\u3046\u30ab")).toBe(true)
    expect(isSingleScript("\u97d3\u570b\uc0ac\ub78c")).toBe(true)
    expect(isSingleScript("\u305f\uc0ac")).toBe(false)
    expect(isSingleScript("2024_-.")).toBe(true)
  })
})
