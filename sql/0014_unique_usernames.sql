-- Usernames (D2; the rules in docs/decisions.md "Identity and sessions") are unique regardless of
-- letter case. Names taken twice before this keep their oldest holder; the others become user-<id>
-- (a form the rules never give from a provider's name). '' is a new user's name for the moment
-- between its row and its chosen name.

UPDATE users u SET username = 'user-' || u.id
WHERE u.username <> ''
  AND EXISTS (SELECT 1 FROM users o WHERE lower(o.username) = lower(u.username) AND o.id < u.id);

CREATE UNIQUE INDEX users_username_key ON users (lower(username)) WHERE username <> '';
