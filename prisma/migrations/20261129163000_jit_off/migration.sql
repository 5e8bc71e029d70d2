-- JIT compilation off for the service's database (ADR 0089): the API's statements are short, and a cost estimate
-- taken from an average (a project's assets, a period's fills) can pass jit_above_cost and spend longer compiling
-- a statement than running it. New sessions take it, on replicas too. A role that may not alter the database
-- leaves the setting as the operator configured it.
DO $$
BEGIN
  EXECUTE format('ALTER DATABASE %I SET jit = off', current_database());
EXCEPTION WHEN insufficient_privilege THEN
  RAISE WARNING 'jit left as configured: % may not alter database %', current_user, current_database();
END
$$;
