/** Users at sign-in and the grant-admin command (D2). */
import { expect, layer } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { Randomness } from "../../src/layers/Randomness"
import { Users } from "../../src/services/Users"
import { TestDatabase } from "../support/TestDatabase"

layer(Users.Default.pipe(Layer.provide(Randomness.seeded("users")), Layer.provideMerge(TestDatabase)))("Users", (it) => {
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
})
