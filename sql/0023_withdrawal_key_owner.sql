-- Under JURISDICTION=BR a withdrawal goes only to a PIX key its account holder owns (docs/rules.md#pix-key-owner,
-- D22): the owner's CPF as the gateway's key directory named it at request, masked (***.456.789-**,
-- docs/rules.md#identity-masking). NULL when no owner was checked (JURISDICTION=NONE, or requested before).
ALTER TABLE withdrawals ADD COLUMN pix_key_owner_cpf_masked text;
