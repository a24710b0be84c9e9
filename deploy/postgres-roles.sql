-- Warden's two PostgreSQL roles and its schema (docs/deployment.md, "Roles"), as a psql script run
-- by a superuser (or a role with CREATEROLE that owns the database) in Warden's database. The owner
-- owns the schema `warden` and migrates it (`warden migrate --runtime-role warden_runtime`); the
-- runtime role serves (`warden serve --no-migrate`) and gets its rights from that migrate, never DDL.
-- deploy/compose.yaml's `roles` service runs it at every `up`: it makes what is missing and sets the
-- passwords again, and changes nothing else.
--   WARDEN_OWNER_PASSWORD=… WARDEN_RUNTIME_PASSWORD=… psql -d warden -f deploy/postgres-roles.sql
-- Other role names: psql -v owner=… -v runtime=… (the same names in the URLs and --runtime-role).
\set ON_ERROR_STOP on
\if :{?owner}
\else
\set owner warden_owner
\endif
\if :{?runtime}
\else
\set runtime warden_runtime
\endif
\getenv owner_password WARDEN_OWNER_PASSWORD
\getenv runtime_password WARDEN_RUNTIME_PASSWORD
\if :{?owner_password}
\else
do $$ begin raise exception 'set WARDEN_OWNER_PASSWORD (the password of the role that migrates)'; end $$;
\endif
\if :{?runtime_password}
\else
do $$ begin raise exception 'set WARDEN_RUNTIME_PASSWORD (the password of the role that serves)'; end $$;
\endif

select format('create role %I', :'owner')
  where not exists (select from pg_roles where rolname = :'owner') \gexec
select format('create role %I', :'runtime')
  where not exists (select from pg_roles where rolname = :'runtime') \gexec
alter role :"owner" with login nosuperuser nocreatedb nocreaterole password :'owner_password';
alter role :"runtime" with login nosuperuser nocreatedb nocreaterole password :'runtime_password';

create schema if not exists warden authorization :"owner";
alter role :"owner" set search_path = warden;
alter role :"runtime" set search_path = warden;
select format('grant connect on database %I to %I, %I', current_database(), :'owner', :'runtime') \gexec
-- Before PostgreSQL 15 every role may create tables in `public`: not the runtime role.
revoke create on schema public from public;
