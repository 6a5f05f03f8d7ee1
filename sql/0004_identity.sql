-- Identity: audit trail, notifications, daily activity (SPEC "Notification types and audit actions"; D2, D11, D15).

CREATE TABLE audit_logs (
  id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id      bigint REFERENCES users (id),
  action       text NOT NULL,
  entity_type  text,
  entity_id    text,
  metadata     jsonb NOT NULL DEFAULT '{}',
  created_at   timestamptz NOT NULL
);

CREATE INDEX audit_logs_user_idx ON audit_logs (user_id, created_at);
CREATE INDEX audit_logs_action_idx ON audit_logs (action, created_at);

CREATE TABLE notifications (
  id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  user_id     bigint NOT NULL REFERENCES users (id),
  type        text NOT NULL CHECK (type IN ('DEPOSIT_CONFIRMED', 'DEPOSIT_EXPIRED', 'SECURITY_ALERT')),
  title       text NOT NULL,
  message     text NOT NULL,
  read        boolean NOT NULL DEFAULT false,
  created_at  timestamptz NOT NULL
);

CREATE INDEX notifications_user_idx ON notifications (user_id, id DESC);
CREATE INDEX notifications_unread_idx ON notifications (user_id) WHERE NOT read;

-- One row per user and UTC day with an authenticated request (dashboard activeToday, D15).
CREATE TABLE user_activity_days (
  day      date NOT NULL,
  user_id  bigint NOT NULL REFERENCES users (id),
  PRIMARY KEY (day, user_id)
);

ALTER TABLE users ADD COLUMN last_active_at timestamptz;
