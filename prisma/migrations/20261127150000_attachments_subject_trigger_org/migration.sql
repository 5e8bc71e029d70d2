-- The subject trigger's delete names orgId first, so that the (orgId, subjectType, subjectId, …) index serves each
-- deleted subject row; without it the delete scans the organisation-agnostic rows of that subject type.
CREATE OR REPLACE FUNCTION "attachments_delete_subject"() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM "attachments"
    WHERE "orgId" = OLD."orgId" AND "subjectType" = TG_ARGV[0] AND "subjectId" = OLD."id";
    RETURN NULL;
END;
$$;
