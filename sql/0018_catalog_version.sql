-- One version number for the whole catalog (items, cases and their ranges), moved by every change to
-- them. A service instance may keep a case in memory (src/services/CaseOpenings.ts): its write of an
-- opening only takes effect while the version it read is still current, so an edit made through any
-- instance (or by hand) is never missed.
CREATE TABLE catalog_version (
  only_row  boolean PRIMARY KEY DEFAULT true CHECK (only_row),
  version   bigint NOT NULL
);
INSERT INTO catalog_version (version) VALUES (1);

CREATE FUNCTION catalog_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE catalog_version SET version = version + 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER items_changed AFTER INSERT OR UPDATE OR DELETE ON items
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
CREATE TRIGGER cases_changed AFTER INSERT OR UPDATE OR DELETE ON cases
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
CREATE TRIGGER case_items_changed AFTER INSERT OR UPDATE OR DELETE ON case_items
  FOR EACH STATEMENT EXECUTE FUNCTION catalog_changed();
