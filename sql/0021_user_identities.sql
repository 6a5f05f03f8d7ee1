-- Players known by CPF under JURISDICTION=BR (docs/rules.md#identity-verification, D22): one row per
-- verified identity. Refused attempts store nothing.
CREATE TABLE user_identities (
  user_id        bigint PRIMARY KEY REFERENCES users (id),
  -- HMAC-SHA256 (hex) of the CPF's 11 digits under a key derived from IDENTITY_KEY
  -- (docs/rules.md#identity-key): unique, so of two accounts verifying the same CPF at once exactly one
  -- commits; the other finds the conflict and answers 409 CPF already registered.
  cpf_hash       text NOT NULL UNIQUE,
  -- The 11 digits under AES-256-GCM (`v1.<iv>.<tag>.<ciphertext>`, src/services/identity/SecretCipher.ts).
  cpf_encrypted  text NOT NULL,
  -- What is shown of it everywhere: ***.456.789-** (docs/rules.md#identity-masking).
  cpf_masked     text NOT NULL,
  full_name      text NOT NULL,
  birth_date     date NOT NULL,
  status         text NOT NULL DEFAULT 'VERIFIED' CHECK (status IN ('VERIFIED')),
  verified_at    timestamptz NOT NULL
);
