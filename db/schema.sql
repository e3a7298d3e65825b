-- The public schema that db/migrations/ build, written by `npm run db:dump`
-- (db/schema/dump.ts) from a freshly migrated database. Do not edit: add a migration and
-- run npm run db:dump; npm test fails while this file differs from what the migrations build.
--
-- Left out: the pg-boss schema (pgboss: pg-boss installs and upgrades it itself), knex's
-- bookkeeping tables (knex_migrations, knex_migrations_lock), owners, privileges, comments,
-- plpgsql (in every database) and the objects extensions create (btree_gist's functions and
-- operators). The text is the same on PostgreSQL 15 and 17: objects are sorted in byte order, not
-- by the database's collation; extensions appear without their version, which follows the
-- server's release; NOT NULL shows only on its column (PostgreSQL 18 also catalogs it as a
-- constraint with a generated name).

-- Extensions

CREATE EXTENSION IF NOT EXISTS btree_gist;

-- Tables, each with its indexes and triggers

CREATE TABLE api_keys (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  partner_id uuid NOT NULL,
  key_hash text NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  expires_at timestamp with time zone,
  revoked_at timestamp with time zone,
  CONSTRAINT api_keys_pkey PRIMARY KEY (id),
  CONSTRAINT api_keys_key_hash_key UNIQUE (key_hash),
  CONSTRAINT api_keys_partner_id_fkey FOREIGN KEY (partner_id) REFERENCES partners(id) ON DELETE CASCADE
);
CREATE INDEX api_keys_partner_idx ON public.api_keys USING btree (partner_id);

CREATE TABLE availability_change_purges (
  venue_id uuid NOT NULL,
  through_position bigint NOT NULL,
  CONSTRAINT availability_change_purges_pkey PRIMARY KEY (venue_id)
);

CREATE TABLE availability_change_sequencer (
  one boolean NOT NULL DEFAULT true,
  watermark xid8 NOT NULL,
  last_position bigint NOT NULL DEFAULT 0,
  CONSTRAINT availability_change_sequencer_pkey PRIMARY KEY (one),
  CONSTRAINT availability_change_sequencer_one_check CHECK (one)
);

CREATE TABLE availability_changes (
  id bigint GENERATED ALWAYS AS IDENTITY (START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1) NOT NULL,
  venue_id uuid NOT NULL,
  "position" bigint,
  recorded_at timestamp with time zone NOT NULL DEFAULT clock_timestamp(),
  recorded_xid xid8 NOT NULL DEFAULT pg_current_xact_id(),
  kind text NOT NULL,
  resource_ids uuid[],
  windows tstzrange[],
  range_resource_id uuid,
  from_date date,
  to_date date,
  reason text,
  CONSTRAINT availability_changes_pkey PRIMARY KEY (id),
  CONSTRAINT availability_changes_check CHECK (((kind = 'slot'::text) = (windows IS NOT NULL))),
  CONSTRAINT availability_changes_kind_check CHECK ((kind = ANY (ARRAY['slot'::text, 'range'::text]))),
  CONSTRAINT availability_changes_reason_check CHECK ((reason = ANY (ARRAY['blackout'::text, 'price_rule'::text, 'venue_status'::text, 'resource'::text])))
);
CREATE UNIQUE INDEX availability_changes_position_idx ON public.availability_changes USING btree ("position") WHERE ("position" IS NOT NULL);
CREATE INDEX availability_changes_unpositioned_idx ON public.availability_changes USING btree (recorded_xid) WHERE ("position" IS NULL);
CREATE INDEX availability_changes_venue_position_idx ON public.availability_changes USING btree (venue_id, "position") WHERE ("position" IS NOT NULL);
CREATE INDEX availability_changes_venue_recorded_idx ON public.availability_changes USING btree (venue_id, recorded_at);

CREATE TABLE availability_streams (
  id uuid NOT NULL,
  partner_id uuid NOT NULL,
  process_id text NOT NULL,
  opened_at timestamp with time zone NOT NULL DEFAULT now(),
  seen_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT availability_streams_pkey PRIMARY KEY (id)
);
CREATE INDEX availability_streams_partner_idx ON public.availability_streams USING btree (partner_id, seen_at);
CREATE INDEX availability_streams_process_idx ON public.availability_streams USING btree (process_id);

CREATE TABLE blackouts (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  venue_id uuid NOT NULL,
  resource_id uuid,
  unit_ids uuid[],
  during tstzrange NOT NULL,
  reason text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT blackouts_pkey PRIMARY KEY (id),
  CONSTRAINT blackouts_resource_id_fkey FOREIGN KEY (resource_id) REFERENCES resources(id) ON DELETE CASCADE,
  CONSTRAINT blackouts_venue_id_fkey FOREIGN KEY (venue_id) REFERENCES venues(id) ON DELETE CASCADE,
  CONSTRAINT blackouts_during_check CHECK ((NOT isempty(during)))
);
CREATE INDEX blackouts_venue_during_idx ON public.blackouts USING gist (venue_id, during);

CREATE TABLE booked_time (
  unit_id uuid NOT NULL,
  utc_day date NOT NULL,
  booked tstzmultirange NOT NULL,
  CONSTRAINT booked_time_pkey PRIMARY KEY (unit_id, utc_day)
) WITH (fillfactor=50);

CREATE TABLE bookings (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  hold_id uuid NOT NULL,
  partner_id uuid NOT NULL,
  venue_id uuid NOT NULL,
  resource_id uuid NOT NULL,
  slot_id uuid NOT NULL,
  slot_start timestamp with time zone NOT NULL,
  slot_end timestamp with time zone NOT NULL,
  status text NOT NULL DEFAULT 'BOOKED'::text,
  booked_at timestamp with time zone NOT NULL DEFAULT now(),
  price_rupees integer NOT NULL,
  payment_reference text NOT NULL,
  payment_method text,
  package_purchase_id uuid,
  customer_name text NOT NULL,
  customer_phone text NOT NULL,
  customer_email text,
  cancelled_at timestamp with time zone,
  cancel_reason text,
  refunded_at timestamp with time zone,
  refund_reason text,
  hold_group_id uuid,
  series_id uuid,
  series_occurrence_index smallint,
  CONSTRAINT bookings_pkey PRIMARY KEY (id),
  CONSTRAINT bookings_hold_id_key UNIQUE (hold_id),
  CONSTRAINT bookings_hold_group_id_fkey FOREIGN KEY (hold_group_id) REFERENCES hold_groups(id),
  CONSTRAINT bookings_hold_id_fkey FOREIGN KEY (hold_id) REFERENCES holds(id),
  CONSTRAINT bookings_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id),
  CONSTRAINT bookings_status_check CHECK ((status = ANY (ARRAY['BOOKED'::text, 'CANCELLED'::text, 'REFUNDED'::text])))
);
CREATE INDEX bookings_partner_booked_idx ON public.bookings USING btree (partner_id, booked_at DESC, id DESC);
CREATE INDEX bookings_series_idx ON public.bookings USING btree (series_id, booked_at DESC, id DESC) WHERE (series_id IS NOT NULL);

CREATE TABLE ended_venue_grants (
  partner_id uuid NOT NULL,
  venue_id uuid NOT NULL,
  granted_at timestamp with time zone NOT NULL,
  ended_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT ended_venue_grants_pkey PRIMARY KEY (partner_id, venue_id),
  CONSTRAINT ended_venue_grants_partner_id_fkey FOREIGN KEY (partner_id) REFERENCES partners(id) ON DELETE CASCADE,
  CONSTRAINT ended_venue_grants_venue_id_fkey FOREIGN KEY (venue_id) REFERENCES venues(id) ON DELETE CASCADE
);

CREATE TABLE events (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  event_type text NOT NULL,
  venue_id uuid NOT NULL,
  partner_id uuid NOT NULL,
  hold_id uuid,
  booking_id uuid,
  slot_id uuid NOT NULL,
  occurred_at timestamp with time zone NOT NULL DEFAULT now(),
  details jsonb NOT NULL DEFAULT '{}'::jsonb,
  tx xid8 NOT NULL DEFAULT pg_current_xact_id(),
  seq bigint GENERATED ALWAYS AS IDENTITY (START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1) NOT NULL,
  recorded_at timestamp with time zone DEFAULT clock_timestamp(),
  CONSTRAINT events_pkey PRIMARY KEY (id)
);
CREATE INDEX events_occurred_brin ON public.events USING brin (occurred_at);
CREATE INDEX events_venue_position_idx ON public.events USING btree (venue_id, tx, seq);
CREATE INDEX events_venue_type_occurred_idx ON public.events USING btree (venue_id, event_type, occurred_at) INCLUDE (recorded_at);
CREATE INDEX events_venue_type_position_idx ON public.events USING btree (venue_id, event_type, tx, seq);

CREATE TABLE hold_groups (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  partner_id uuid NOT NULL,
  venue_id uuid NOT NULL,
  series_id uuid,
  status text NOT NULL DEFAULT 'ACTIVE'::text,
  hold_expiry_at timestamp with time zone NOT NULL,
  price_rupees integer NOT NULL,
  customer_phone text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  confirmed_at timestamp with time zone,
  cancelled_at timestamp with time zone,
  cancel_reason text,
  expired_at timestamp with time zone,
  CONSTRAINT hold_groups_pkey PRIMARY KEY (id),
  CONSTRAINT hold_groups_partner_id_fkey FOREIGN KEY (partner_id) REFERENCES partners(id),
  CONSTRAINT hold_groups_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id) DEFERRABLE INITIALLY DEFERRED,
  CONSTRAINT hold_groups_venue_id_fkey FOREIGN KEY (venue_id) REFERENCES venues(id),
  CONSTRAINT hold_groups_status_check CHECK ((status = ANY (ARRAY['ACTIVE'::text, 'CONFIRMED'::text, 'CANCELLED'::text, 'EXPIRED'::text])))
);
CREATE INDEX hold_groups_partner_idx ON public.hold_groups USING btree (partner_id);

CREATE TABLE holds (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  partner_id uuid NOT NULL,
  venue_id uuid NOT NULL,
  resource_id uuid NOT NULL,
  slot_id uuid NOT NULL,
  slot_start timestamp with time zone NOT NULL,
  slot_end timestamp with time zone NOT NULL,
  status text NOT NULL DEFAULT 'ACTIVE'::text,
  hold_expiry_at timestamp with time zone NOT NULL,
  price_rupees integer NOT NULL,
  customer_phone text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  cancelled_at timestamp with time zone,
  cancel_reason text,
  expired_at timestamp with time zone,
  discount_percent integer NOT NULL DEFAULT 0,
  hold_group_id uuid,
  item_index smallint,
  series_id uuid,
  series_occurrence_index smallint,
  CONSTRAINT holds_pkey PRIMARY KEY (id),
  CONSTRAINT holds_hold_group_id_fkey FOREIGN KEY (hold_group_id) REFERENCES hold_groups(id),
  CONSTRAINT holds_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id),
  CONSTRAINT holds_check CHECK ((slot_start < slot_end)),
  CONSTRAINT holds_discount_percent_check CHECK (((discount_percent >= 0) AND (discount_percent <= 100))),
  CONSTRAINT holds_item_in_group CHECK (((hold_group_id IS NULL) = (item_index IS NULL))),
  CONSTRAINT holds_occurrence_in_series CHECK (((series_id IS NULL) = (series_occurrence_index IS NULL))),
  CONSTRAINT holds_status_check CHECK ((status = ANY (ARRAY['ACTIVE'::text, 'CANCELLED'::text, 'EXPIRED'::text, 'CONFIRMED'::text])))
);
CREATE INDEX holds_group_idx ON public.holds USING btree (hold_group_id, item_index) WHERE (hold_group_id IS NOT NULL);
CREATE INDEX holds_partner_idx ON public.holds USING btree (partner_id);
CREATE INDEX holds_running_idx ON public.holds USING btree (venue_id, hold_expiry_at) WHERE (status = 'ACTIVE'::text);

CREATE TABLE idempotency_keys (
  partner_id uuid NOT NULL,
  key text NOT NULL,
  operation text NOT NULL,
  fingerprint text NOT NULL,
  status_code integer,
  response json,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  result jsonb,
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (partner_id, key)
);
CREATE INDEX idempotency_keys_created_brin ON public.idempotency_keys USING brin (created_at);

CREATE TABLE memberships (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  venue_id uuid NOT NULL,
  customer_phone text NOT NULL,
  discount_percent integer NOT NULL,
  expires_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT memberships_pkey PRIMARY KEY (id),
  CONSTRAINT memberships_venue_id_fkey FOREIGN KEY (venue_id) REFERENCES venues(id) ON DELETE CASCADE,
  CONSTRAINT memberships_discount_percent_check CHECK (((discount_percent >= 1) AND (discount_percent <= 100)))
);
CREATE INDEX memberships_venue_phone_idx ON public.memberships USING btree (venue_id, customer_phone);

CREATE TABLE package_purchases (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  package_id uuid NOT NULL,
  venue_id uuid NOT NULL,
  partner_id uuid NOT NULL,
  customer_phone text NOT NULL,
  payment_method text NOT NULL,
  price_rupees integer NOT NULL,
  credits_total integer NOT NULL,
  credits_remaining integer NOT NULL,
  purchased_at timestamp with time zone NOT NULL DEFAULT now(),
  expires_at timestamp with time zone NOT NULL,
  CONSTRAINT package_purchases_pkey PRIMARY KEY (id),
  CONSTRAINT package_purchases_package_id_fkey FOREIGN KEY (package_id) REFERENCES packages(id),
  CONSTRAINT package_purchases_check CHECK (((credits_remaining >= 0) AND (credits_remaining <= credits_total))),
  CONSTRAINT package_purchases_payment_method_check CHECK ((payment_method = ANY (ARRAY['cash'::text, 'upi'::text, 'card'::text, 'other'::text])))
);
CREATE INDEX package_purchases_owner_idx ON public.package_purchases USING btree (partner_id, venue_id, customer_phone, expires_at);

CREATE TABLE packages (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  venue_id uuid NOT NULL,
  name text NOT NULL,
  credits integer NOT NULL,
  price_rupees integer NOT NULL,
  valid_days integer NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT packages_pkey PRIMARY KEY (id),
  CONSTRAINT packages_venue_id_fkey FOREIGN KEY (venue_id) REFERENCES venues(id) ON DELETE CASCADE,
  CONSTRAINT packages_credits_check CHECK (((credits >= 1) AND (credits <= 1000))),
  CONSTRAINT packages_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
  CONSTRAINT packages_price_rupees_check CHECK (((price_rupees >= 0) AND (price_rupees <= 10000000))),
  CONSTRAINT packages_valid_days_check CHECK (((valid_days >= 1) AND (valid_days <= 3660)))
);
CREATE INDEX packages_venue_idx ON public.packages USING btree (venue_id);

CREATE TABLE partners (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name text NOT NULL,
  rate_limit integer NOT NULL DEFAULT 60,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT partners_pkey PRIMARY KEY (id),
  CONSTRAINT partners_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
  CONSTRAINT partners_rate_limit_check CHECK (((rate_limit >= 1) AND (rate_limit <= 1000000)))
);

CREATE TABLE price_rules (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  resource_id uuid NOT NULL,
  price_rupees integer NOT NULL,
  days smallint[],
  from_time time without time zone,
  to_time time without time zone,
  on_date date,
  specificity smallint GENERATED ALWAYS AS (((
    CASE
        WHEN (on_date IS NOT NULL) THEN 4
        ELSE 0
    END +
    CASE
        WHEN (days IS NOT NULL) THEN 2
        ELSE 0
    END) +
    CASE
        WHEN (from_time IS NOT NULL) THEN 1
        ELSE 0
    END)) STORED,
  created_at timestamp with time zone NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT price_rules_pkey PRIMARY KEY (id),
  CONSTRAINT price_rules_resource_id_fkey FOREIGN KEY (resource_id) REFERENCES resources(id) ON DELETE CASCADE,
  CONSTRAINT price_rules_check CHECK ((((from_time IS NULL) = (to_time IS NULL)) AND ((from_time IS NULL) OR (from_time < to_time)))),
  CONSTRAINT price_rules_check1 CHECK (((on_date IS NULL) OR (days IS NULL))),
  CONSTRAINT price_rules_days_check CHECK (((days <@ ARRAY[(1)::smallint, (2)::smallint, (3)::smallint, (4)::smallint, (5)::smallint, (6)::smallint, (7)::smallint]) AND (cardinality(days) > 0))),
  CONSTRAINT price_rules_price_rupees_check CHECK (((price_rupees >= 0) AND (price_rupees <= 10000000)))
);
CREATE INDEX price_rules_resource_idx ON public.price_rules USING btree (resource_id);

CREATE UNLOGGED TABLE rate_limit_hits (
  api_key_id uuid NOT NULL,
  seq bigint NOT NULL,
  hit_at timestamp with time zone NOT NULL,
  CONSTRAINT rate_limit_hits_pkey PRIMARY KEY (api_key_id, seq)
);

CREATE UNLOGGED TABLE rate_limit_windows (
  api_key_id uuid NOT NULL,
  head_seq bigint NOT NULL DEFAULT 0,
  next_seq bigint NOT NULL DEFAULT 0,
  CONSTRAINT rate_limit_windows_pkey PRIMARY KEY (api_key_id)
);

CREATE TABLE reservations (
  id bigint GENERATED ALWAYS AS IDENTITY (START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1) NOT NULL,
  hold_id uuid NOT NULL,
  unit_id uuid NOT NULL,
  resource_id uuid NOT NULL,
  during tstzrange NOT NULL,
  active boolean NOT NULL DEFAULT true,
  expires_at timestamp with time zone,
  CONSTRAINT reservations_pkey PRIMARY KEY (id),
  CONSTRAINT reservations_no_overlap EXCLUDE USING gist (unit_id WITH =, during WITH &&) WHERE (active),
  CONSTRAINT reservations_hold_id_fkey FOREIGN KEY (hold_id) REFERENCES holds(id)
);
CREATE INDEX reservations_hold_idx ON public.reservations USING btree (hold_id);
CREATE TRIGGER reservations_booked_on_delete AFTER DELETE ON public.reservations FOR EACH ROW WHEN ((old.active AND (old.expires_at IS NULL))) EXECUTE FUNCTION reservations_keep_booked_time();
CREATE TRIGGER reservations_booked_on_insert AFTER INSERT ON public.reservations FOR EACH ROW WHEN ((new.active AND (new.expires_at IS NULL))) EXECUTE FUNCTION reservations_keep_booked_time();
CREATE TRIGGER reservations_booked_on_truncate AFTER TRUNCATE ON public.reservations FOR EACH STATEMENT EXECUTE FUNCTION reservations_clear_booked_time();
CREATE TRIGGER reservations_booked_on_update AFTER UPDATE ON public.reservations FOR EACH ROW WHEN ((((old.active AND (old.expires_at IS NULL)) IS DISTINCT FROM (new.active AND (new.expires_at IS NULL))) OR (new.active AND (new.expires_at IS NULL) AND ((old.unit_id IS DISTINCT FROM new.unit_id) OR (old.during IS DISTINCT FROM new.during))))) EXECUTE FUNCTION reservations_keep_booked_time();

CREATE TABLE resource_parts (
  resource_id uuid NOT NULL,
  part_id uuid NOT NULL,
  CONSTRAINT resource_parts_pkey PRIMARY KEY (resource_id, part_id),
  CONSTRAINT resource_parts_part_id_fkey FOREIGN KEY (part_id) REFERENCES resources(id) ON DELETE CASCADE,
  CONSTRAINT resource_parts_resource_id_fkey FOREIGN KEY (resource_id) REFERENCES resources(id) ON DELETE CASCADE,
  CONSTRAINT resource_parts_check CHECK ((resource_id <> part_id))
);
CREATE INDEX resource_parts_part_idx ON public.resource_parts USING btree (part_id);

CREATE TABLE resources (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  venue_id uuid NOT NULL,
  resource_type text NOT NULL,
  sport_category text NOT NULL,
  duration_minutes integer NOT NULL,
  price_rupees integer NOT NULL,
  opens_at time without time zone NOT NULL,
  closes_at time without time zone NOT NULL,
  closed_on smallint[] NOT NULL DEFAULT '{}'::smallint[],
  created_at timestamp with time zone NOT NULL DEFAULT clock_timestamp(),
  CONSTRAINT resources_pkey PRIMARY KEY (id),
  CONSTRAINT resources_venue_id_fkey FOREIGN KEY (venue_id) REFERENCES venues(id) ON DELETE CASCADE,
  CONSTRAINT resources_check CHECK ((opens_at < closes_at)),
  CONSTRAINT resources_closed_on_check CHECK ((closed_on <@ ARRAY[(1)::smallint, (2)::smallint, (3)::smallint, (4)::smallint, (5)::smallint, (6)::smallint, (7)::smallint])),
  CONSTRAINT resources_duration_minutes_check CHECK (((duration_minutes >= 15) AND (duration_minutes <= 1440))),
  CONSTRAINT resources_price_rupees_check CHECK (((price_rupees >= 0) AND (price_rupees <= 10000000))),
  CONSTRAINT resources_resource_type_check CHECK (((length(resource_type) >= 1) AND (length(resource_type) <= 100))),
  CONSTRAINT resources_sport_category_check CHECK (((length(sport_category) >= 1) AND (length(sport_category) <= 100)))
);
CREATE INDEX resources_venue_idx ON public.resources USING btree (venue_id);

CREATE TABLE series (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  partner_id uuid NOT NULL,
  venue_id uuid NOT NULL,
  resource_id uuid NOT NULL,
  hold_group_id uuid NOT NULL,
  timezone text NOT NULL,
  first_date date NOT NULL,
  start_time time without time zone NOT NULL,
  slot_duration_minutes integer NOT NULL,
  count smallint NOT NULL,
  interval_weeks smallint NOT NULL,
  price_rupees integer NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT series_pkey PRIMARY KEY (id),
  CONSTRAINT series_hold_group_id_key UNIQUE (hold_group_id),
  CONSTRAINT series_hold_group_id_fkey FOREIGN KEY (hold_group_id) REFERENCES hold_groups(id),
  CONSTRAINT series_partner_id_fkey FOREIGN KEY (partner_id) REFERENCES partners(id),
  CONSTRAINT series_resource_id_fkey FOREIGN KEY (resource_id) REFERENCES resources(id),
  CONSTRAINT series_venue_id_fkey FOREIGN KEY (venue_id) REFERENCES venues(id),
  CONSTRAINT series_count_check CHECK (((count >= 2) AND (count <= 26))),
  CONSTRAINT series_interval_weeks_check CHECK (((interval_weeks >= 1) AND (interval_weeks <= 4))),
  CONSTRAINT series_slot_duration_minutes_check CHECK (((slot_duration_minutes >= 15) AND (slot_duration_minutes <= 1440)))
);
CREATE INDEX series_partner_idx ON public.series USING btree (partner_id);

CREATE TABLE series_occurrences (
  series_id uuid NOT NULL,
  occurrence_index smallint NOT NULL,
  local_date date NOT NULL,
  slot_start timestamp with time zone,
  slot_end timestamp with time zone,
  utc_offset text,
  created_status text NOT NULL,
  reason text,
  price_rupees integer,
  hold_id uuid,
  CONSTRAINT series_occurrences_pkey PRIMARY KEY (series_id, occurrence_index),
  CONSTRAINT series_occurrences_hold_id_key UNIQUE (hold_id),
  CONSTRAINT series_occurrences_hold_id_fkey FOREIGN KEY (hold_id) REFERENCES holds(id),
  CONSTRAINT series_occurrences_series_id_fkey FOREIGN KEY (series_id) REFERENCES series(id),
  CONSTRAINT series_occurrences_check CHECK (((created_status = 'HELD'::text) = (hold_id IS NOT NULL))),
  CONSTRAINT series_occurrences_created_status_check CHECK ((created_status = ANY (ARRAY['HELD'::text, 'SKIPPED'::text, 'EXCLUDED'::text])))
);

CREATE TABLE venue_grants (
  partner_id uuid NOT NULL,
  venue_id uuid NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT venue_grants_pkey PRIMARY KEY (partner_id, venue_id),
  CONSTRAINT venue_grants_partner_id_fkey FOREIGN KEY (partner_id) REFERENCES partners(id) ON DELETE CASCADE,
  CONSTRAINT venue_grants_venue_id_fkey FOREIGN KEY (venue_id) REFERENCES venues(id) ON DELETE CASCADE
);
CREATE INDEX venue_grants_venue_idx ON public.venue_grants USING btree (venue_id);

CREATE TABLE venues (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  name text NOT NULL,
  address text NOT NULL,
  city text NOT NULL,
  timezone text NOT NULL DEFAULT 'Asia/Kolkata'::text,
  hold_seconds integer NOT NULL DEFAULT 900,
  min_lead_minutes integer NOT NULL DEFAULT 0,
  max_advance_days integer NOT NULL DEFAULT 21,
  status text NOT NULL DEFAULT 'active'::text,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  series_max_advance_days integer,
  CONSTRAINT venues_pkey PRIMARY KEY (id),
  CONSTRAINT venues_address_check CHECK (((length(address) >= 1) AND (length(address) <= 500))),
  CONSTRAINT venues_city_check CHECK (((length(city) >= 1) AND (length(city) <= 200))),
  CONSTRAINT venues_hold_seconds_check CHECK (((hold_seconds >= 1) AND (hold_seconds <= 86400))),
  CONSTRAINT venues_max_advance_days_check CHECK (((max_advance_days >= 0) AND (max_advance_days <= 730))),
  CONSTRAINT venues_min_lead_minutes_check CHECK (((min_lead_minutes >= 0) AND (min_lead_minutes <= 43200))),
  CONSTRAINT venues_name_check CHECK (((length(name) >= 1) AND (length(name) <= 200))),
  CONSTRAINT venues_series_max_advance_days_check CHECK (((series_max_advance_days >= 0) AND (series_max_advance_days <= 730))),
  CONSTRAINT venues_status_check CHECK ((status = ANY (ARRAY['active'::text, 'paused'::text, 'archived'::text])))
);

CREATE TABLE waitlist_entries (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  partner_id uuid NOT NULL,
  venue_id uuid NOT NULL,
  resource_id uuid NOT NULL,
  slot_date date NOT NULL,
  customer_phone text NOT NULL,
  customer_name text,
  status text NOT NULL DEFAULT 'waiting'::text,
  slot_id uuid,
  promoted_at timestamp with time zone,
  expires_at timestamp with time zone NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT waitlist_entries_pkey PRIMARY KEY (id),
  CONSTRAINT waitlist_entries_partner_id_venue_id_resource_id_slot_date__key UNIQUE (partner_id, venue_id, resource_id, slot_date, customer_phone),
  CONSTRAINT waitlist_entries_status_check CHECK ((status = ANY (ARRAY['waiting'::text, 'promoted'::text, 'expired'::text, 'cancelled'::text])))
);
CREATE INDEX waitlist_entries_queue_idx ON public.waitlist_entries USING btree (venue_id, resource_id, slot_date, created_at, id) WHERE (status = 'waiting'::text);

CREATE TABLE waitlist_promotions (
  event_id uuid NOT NULL,
  entry_id uuid NOT NULL,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  CONSTRAINT waitlist_promotions_pkey PRIMARY KEY (event_id),
  CONSTRAINT waitlist_promotions_entry_id_fkey FOREIGN KEY (entry_id) REFERENCES waitlist_entries(id)
);

CREATE TABLE webhook_attempts (
  id uuid NOT NULL,
  delivery_id uuid NOT NULL,
  attempt integer NOT NULL,
  status_code integer,
  error text,
  started_at timestamp with time zone NOT NULL,
  finished_at timestamp with time zone,
  CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id),
  CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE
);
CREATE INDEX webhook_attempts_delivery_idx ON public.webhook_attempts USING btree (delivery_id);
CREATE INDEX webhook_attempts_started_brin ON public.webhook_attempts USING brin (started_at);

CREATE TABLE webhook_deliveries (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  event_id uuid NOT NULL,
  subscription_id uuid NOT NULL,
  partner_id uuid NOT NULL,
  status text NOT NULL DEFAULT 'pending'::text,
  attempts integer NOT NULL DEFAULT 0,
  last_attempt_id uuid,
  last_status_code integer,
  last_error text,
  next_attempt_at timestamp with time zone,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  last_attempt_at timestamp with time zone,
  delivered_at timestamp with time zone,
  next_attempt_id uuid,
  trace text,
  CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id),
  CONSTRAINT webhook_deliveries_event_id_subscription_id_key UNIQUE (event_id, subscription_id),
  CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES events(id),
  CONSTRAINT webhook_deliveries_subscription_id_fkey FOREIGN KEY (subscription_id) REFERENCES webhook_subscriptions(id) ON DELETE CASCADE,
  CONSTRAINT webhook_deliveries_named_attempt_check CHECK (((next_attempt_id IS NULL) OR (status = ANY (ARRAY['pending'::text, 'failed'::text])))),
  CONSTRAINT webhook_deliveries_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'failed'::text, 'delivered'::text, 'dead_letter'::text])))
);
CREATE INDEX webhook_deliveries_created_brin ON public.webhook_deliveries USING brin (created_at);
CREATE INDEX webhook_deliveries_in_flight_idx ON public.webhook_deliveries USING btree (last_attempt_at) WHERE ((status = 'pending'::text) AND (next_attempt_id IS NULL) AND (attempts > 0));
CREATE INDEX webhook_deliveries_named_idx ON public.webhook_deliveries USING btree (subscription_id, next_attempt_at) WHERE (next_attempt_id IS NOT NULL);
CREATE INDEX webhook_deliveries_partner_status_idx ON public.webhook_deliveries USING btree (partner_id, status);

CREATE TABLE webhook_subscriptions (
  id uuid NOT NULL DEFAULT gen_random_uuid(),
  partner_id uuid NOT NULL,
  endpoint_url text NOT NULL,
  event_types text[] NOT NULL,
  secret_key text NOT NULL,
  is_active boolean NOT NULL DEFAULT true,
  created_at timestamp with time zone NOT NULL DEFAULT now(),
  updated_at timestamp with time zone NOT NULL DEFAULT now(),
  origin text GENERATED ALWAYS AS (lower("substring"(endpoint_url, '^[A-Za-z][A-Za-z0-9+.-]*://[^/?#]*'::text))) STORED NOT NULL,
  CONSTRAINT webhook_subscriptions_pkey PRIMARY KEY (id),
  CONSTRAINT webhook_subscriptions_partner_id_fkey FOREIGN KEY (partner_id) REFERENCES partners(id) ON DELETE CASCADE,
  CONSTRAINT webhook_subscriptions_event_types_check CHECK ((cardinality(event_types) > 0))
);
CREATE INDEX webhook_subscriptions_partner_idx ON public.webhook_subscriptions USING btree (partner_id);

-- Sequences

CREATE SEQUENCE availability_change_position AS bigint START WITH 1 INCREMENT BY 1 MINVALUE 1 MAXVALUE 9223372036854775807 CACHE 1;

-- Functions

CREATE OR REPLACE FUNCTION public.api_key_is_live(k api_keys)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
  select k.revoked_at is null and (k.expires_at is null or k.expires_at > now())
$function$;

CREATE OR REPLACE FUNCTION public.authorized_venues(p_partner_id uuid)
 RETURNS SETOF venues
 LANGUAGE sql
 STABLE
AS $function$
  select v.* from venues v join venue_grants g on g.venue_id = v.id
  where g.partner_id = p_partner_id and v.status <> 'archived'
$function$;

CREATE OR REPLACE FUNCTION public.availability_change_events(p_changes availability_changes[])
 RETURNS TABLE(change_position bigint, k integer, resource_id uuid, event jsonb)
 LANGUAGE sql
 STABLE
AS $function$
with c as (
  select * from unnest(p_changes)
), unit as materialized (
  -- The units of every resource of these venues, once.
  select s.id, s.venue_id, s.created_at, s.duration_minutes, resource_units(s.id) as units
    from resources s where s.venue_id in (select c.venue_id from c where c.kind = 'slot')
), member as materialized (
  select u.id as resource_id, m.unit_id from unit u cross join lateral unnest(u.units) as m(unit_id)
), window_of as materialized (
  -- Each slot change's windows, each on its resource.
  select c.position, c.venue_id, c.recorded_at, w.resource_id, w.during
    from c cross join lateral unnest(c.resource_ids, c.windows) as w(resource_id, during)
   where c.kind = 'slot'
), affected as (
  -- Each window on every resource sharing a unit with its own (found by unit, in hash joins), of
  -- those that existed when the change was recorded.
  select distinct w.position, w.venue_id, s.id as resource_id, s.duration_minutes, w.during
    from window_of w
    join member changed on changed.resource_id = w.resource_id
    join member sharing on sharing.unit_id = changed.unit_id
    join unit s on s.id = sharing.resource_id and s.created_at <= w.recorded_at
), probe as (
  select distinct a.venue_id, a.resource_id, a.duration_minutes, a.during from affected a
), slot as (
  -- The grid slots overlapping each probed window, on the venue-local dates it touches.
  select p.venue_id, p.resource_id as probe_resource_id, p.during as probe_during, vs.*
    from probe p
    join venues v on v.id = p.venue_id
    cross join lateral (select distinct d
                          from unnest(array[(lower(p.during) at time zone v.timezone)::date,
                                            ((upper(p.during) - interval '1 microsecond') at time zone v.timezone)::date]) d) d
    -- venue_slots() keeps the slots inside [from, to]: these bounds keep those overlapping the window.
    cross join lateral venue_slots(p.venue_id, d.d, p.resource_id,
                                   lower(p.during) - make_interval(mins => p.duration_minutes) + interval '1 microsecond',
                                   upper(p.during) + make_interval(mins => p.duration_minutes) - interval '1 microsecond') vs
), state as (
  -- Each slot once: its event's JSON.
  select distinct on (s.resource_id, s.slot_start) s.venue_id, s.resource_id, s.slot_start,
         jsonb_build_object(
           'type', 'slot', 'venue_id', s.venue_id, 'slot_id', slot_id(s.resource_id, s.slot_start),
           'resource_id', s.resource_id, 'slot_start', iso_utc(s.slot_start), 'slot_end', iso_utc(s.slot_end),
           'price_rupees', s.price_rupees, 'is_available', s.bookable and not s.taken,
           'held_until', case when s.bookable and s.taken then (
             -- Unit by unit, each unit's reservations read apart: the exclusion index (GiST) searches
             -- by `unit_id = x` and the window together, but a join or `unit_id = any (units)` left
             -- the planner a search by the window alone, through every unit's (0.15 ms a slot).
             select case when bool_or(x.open) then null else iso_utc(max(x.expires)) end
               from unnest(u.units) as unit(id)
              cross join lateral (
                select bool_or(rv.expires_at is null) as open, max(rv.expires_at) as expires
                  from reservations rv
                 where rv.unit_id = unit.id and rv.active and rv.during && tstzrange(s.slot_start, s.slot_end)
                   and reservation_is_live(rv)) x) end) as event
    from slot s join unit u on u.id = s.resource_id
   order by s.resource_id, s.slot_start
), listed as (
  -- Each change's slots, each once (two windows of a group may reach the same slot).
  select distinct a.position, s.resource_id, s.slot_start
    from affected a
    join slot s on s.probe_resource_id = a.resource_id and s.probe_during = a.during
)
select l.position, (row_number() over (partition by l.position order by l.slot_start, l.resource_id) - 1)::integer,
       l.resource_id, st.event
  from listed l
  join state st on st.resource_id = l.resource_id and st.slot_start = l.slot_start
union all
select c.position, 0, c.range_resource_id, jsonb_build_object(
         'type', 'range', 'venue_id', c.venue_id, 'resource_id', c.range_resource_id,
         'from', to_char(c.from_date, 'YYYY-MM-DD'), 'to', to_char(c.to_date, 'YYYY-MM-DD'), 'reason', c.reason)
  from c where c.kind = 'range'
$function$;

CREATE OR REPLACE FUNCTION public.availability_cursor_expired(p_venue_id uuid, p_position bigint, p_retention_seconds integer)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
AS $function$
begin
  return exists (select from availability_change_purges p
                  where p.venue_id = p_venue_id and p.through_position > p_position)
      or exists (select from availability_changes c
                  where c.venue_id = p_venue_id
                    and c.recorded_at < now() - make_interval(secs => p_retention_seconds)
                    and (c.position is null or c.position > p_position));
end
$function$;

CREATE OR REPLACE FUNCTION public.availability_day_span(p_timezone text, p_date date)
 RETURNS tstzrange
 LANGUAGE sql
 STABLE
AS $function$
  select tstzrange((p_date::timestamp at time zone p_timezone) - interval '3 hours',
                   ((p_date + 1)::timestamp at time zone p_timezone) + interval '3 hours')
$function$;

CREATE OR REPLACE FUNCTION public.availability_feed(p_venue_ids uuid[], p_after_position bigint, p_after_k integer, p_resource_id uuid, p_limit integer)
 RETURNS TABLE(change_position bigint, k integer, venue_id uuid, event jsonb)
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
declare
  v_units uuid[] := case when p_resource_id is not null then resource_units(p_resource_id) end;
  v_from bigint := p_after_position + case when p_after_k is null then 1 else 0 end;
  v_changes availability_changes[];
  v_batch integer;
  v_size integer := 50;
  v_event record;
  v_listed integer := 0;
begin
  if p_limit <= 0 then
    return;
  end if;
  loop
    v_batch := least(p_limit - v_listed, v_size);
    v_size := least(v_size * 2, 1000);
    -- One venue (a poll, a stream catching up) reads its changes in order from its index; several
    -- (the streams' reader, just after its last read) read the few positioned since.
    if cardinality(p_venue_ids) = 1 then
      select array_agg(b order by b.position) into v_changes
        from (select c.* from availability_changes c
               where c.venue_id = p_venue_ids[1] and c.position is not null and c.position >= v_from
                 and (p_resource_id is null or c.kind = 'range'
                      or exists (select from unnest(c.resource_ids) r where resource_units(r) && v_units))
               order by c.venue_id, c.position
               limit v_batch) b;
    else
      select array_agg(b order by b.position) into v_changes
        from (select c.* from availability_changes c
               where c.venue_id = any (p_venue_ids) and c.position is not null and c.position >= v_from
                 and (p_resource_id is null or c.kind = 'range'
                      or exists (select from unnest(c.resource_ids) r where resource_units(r) && v_units))
               order by c.position
               limit v_batch) b;
    end if;
    exit when v_changes is null;
    for v_event in
      select e.change_position, e.k, e.resource_id, e.event, c.venue_id
        from availability_change_events(v_changes) e
        join unnest(v_changes) c on c.position = e.change_position
       order by e.change_position, e.k
    loop
      continue when v_event.change_position = p_after_position and p_after_k is not null
                    and v_event.k <= p_after_k;
      continue when p_resource_id is not null and v_event.resource_id is not null
                    and v_event.resource_id <> p_resource_id;
      change_position := v_event.change_position;
      k := v_event.k;
      venue_id := v_event.venue_id;
      event := v_event.event;
      return next;
      v_listed := v_listed + 1;
      if v_listed >= p_limit then
        return;
      end if;
    end loop;
    exit when cardinality(v_changes) < v_batch;
    v_from := v_changes[cardinality(v_changes)].position + 1;
  end loop;
end
$function$;

CREATE OR REPLACE FUNCTION public.availability_last_position()
 RETURNS bigint
 LANGUAGE plpgsql
 STABLE
AS $function$
begin
  return (select s.last_position from availability_change_sequencer s);
end
$function$;

CREATE OR REPLACE FUNCTION public.availability_snapshot(p_partner_id uuid, p_venue_id uuid, p_date date, p_one_resource boolean, p_resource_id uuid)
 RETURNS TABLE(resource_id uuid, starts_ms text, ends_ms text, prices text, available text, changes_position bigint)
 LANGUAGE sql
 STABLE
AS $function$
  select s.resource_id, s.starts_ms, s.ends_ms, s.prices, s.available, s.changes_position
    from availability_snapshot_since(p_partner_id, p_venue_id, p_date, p_one_resource, p_resource_id,
                                     null, null, null) s
$function$;

CREATE OR REPLACE FUNCTION public.availability_snapshot_since(p_partner_id uuid, p_venue_id uuid, p_date date, p_one_resource boolean, p_resource_id uuid, p_known_position bigint, p_known_snapshot pg_snapshot, p_known_until_ms double precision)
 RETURNS TABLE(resource_id uuid, starts_ms text, ends_ms text, prices text, available text, changes_position bigint, snapshot text, unchanged boolean, now_ms double precision, lead_minutes integer, valid_until_ms double precision)
 LANGUAGE plpgsql
 STABLE
AS $function$
#variable_conflict use_column
begin
  if p_known_position is not null then
    perform check_availability_access(p_partner_id, p_venue_id, p_one_resource, p_resource_id);
    if date_part('epoch', now()) * 1000 < p_known_until_ms
       and availability_unchanged(p_venue_id, p_date, p_known_position, p_known_snapshot) then
      return query select null::uuid, null::text, null::text, null::text, null::text,
                          availability_last_position(), pg_current_snapshot()::text, true, null::float8,
                          null::integer, null::float8;
      return;
    end if;
  end if;
  return query
    select a.resource_id, a.starts_ms, a.ends_ms, a.prices, a.available, null::bigint, null::text,
           null::boolean, null::float8, null::integer, null::float8
      from venue_availability(p_partner_id, p_venue_id, p_date, p_one_resource, p_resource_id) a;
  return query
    select null::uuid, null::text, null::text, null::text, null::text, availability_last_position(),
           pg_current_snapshot()::text, false, date_part('epoch', now()) * 1000, v.min_lead_minutes,
           date_part('epoch', availability_valid_until(p_venue_id, p_date)) * 1000
      from venues v where v.id = p_venue_id;
end
$function$;

CREATE OR REPLACE FUNCTION public.availability_unchanged(p_venue_id uuid, p_date date, p_position bigint, p_snapshot pg_snapshot)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
AS $function$
begin
  return not exists (select from availability_change_purges p
                      where p.venue_id = p_venue_id and p.through_position > p_position)
     and not exists (
       select from venues v,
              -- The changes the snapshot may not have seen, each set by its own index.
              (select c.* from availability_changes c
                where c.venue_id = p_venue_id and c.position > p_position
               union all
               select c.* from availability_changes c
                where c.position is null and c.recorded_xid >= pg_snapshot_xmin(p_snapshot)
                  and c.venue_id = p_venue_id) c
        where v.id = p_venue_id
          and not pg_visible_in_snapshot(c.recorded_xid, p_snapshot)
          and ((c.kind = 'range' and p_date between c.from_date and c.to_date)
               or (c.kind = 'slot' and availability_day_span(v.timezone, p_date) && any (c.windows))));
end
$function$;

CREATE OR REPLACE FUNCTION public.availability_valid_until(p_venue_id uuid, p_date date)
 RETURNS timestamp with time zone
 LANGUAGE plpgsql
 STABLE
AS $function$
declare
  v_enters timestamptz;
  v_leaves timestamptz;
  v_span tstzrange;
  v_edge timestamptz;
begin
  select ((p_date - v.max_advance_days)::timestamp at time zone v.timezone),
         ((p_date + 1)::timestamp at time zone v.timezone),
         availability_day_span(v.timezone, p_date)
    into v_enters, v_leaves, v_span
    from venues v where v.id = p_venue_id;
  if not found then
    return null;
  end if;
  v_edge := case when now() < v_enters - interval '3 hours' then v_enters - interval '3 hours'
                 when now() < v_enters + interval '3 hours' then now()
                 when now() < v_leaves - interval '3 hours' then v_leaves - interval '3 hours'
                 when now() < v_leaves + interval '3 hours' then now()
                 else 'infinity'::timestamptz end;
  return least(v_edge,
               (select min(least(h.hold_expiry_at, rv.expires_at))
                  from holds h join reservations rv on rv.hold_id = h.id
                 where h.venue_id = p_venue_id and h.status = 'ACTIVE' and h.hold_expiry_at > now()
                   and rv.active and rv.expires_at > now()
                   and tstzrange(h.slot_start, h.slot_end) && v_span));
end
$function$;

CREATE OR REPLACE FUNCTION public.book_reservations(p_hold_ids uuid[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
declare
  v_id bigint;
begin
  if cardinality(p_hold_ids) = 1 then
    update reservations set expires_at = null where hold_id = p_hold_ids[1] and active;
  else
    for v_id in
      select r.id from reservations r where r.hold_id = any (p_hold_ids) and r.active order by r.unit_id, lower(r.during)
    loop
      update reservations set expires_at = null where id = v_id;
    end loop;
  end if;
  perform record_windows_changed(p_hold_ids);
end
$function$;

CREATE OR REPLACE FUNCTION public.booked_time_change(p_unit_id uuid, p_during tstzrange, p_add boolean)
 RETURNS void
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  v_first date := (lower(p_during) at time zone 'UTC')::date;
  v_last date := (upper(p_during) at time zone 'UTC')::date;
begin
  if p_add then
    insert into booked_time as t (unit_id, utc_day, booked)
      select p_unit_id, d.day, multirange(p_during * d.span)
      from (select v_first + i as day,
                   tstzrange((v_first + i) at time zone 'UTC', (v_first + i + 1) at time zone 'UTC') as span
              from generate_series(0, v_last - v_first) i) d
      where not isempty(p_during * d.span)
      on conflict (unit_id, utc_day) do update set booked = t.booked + excluded.booked;
  else
    update booked_time t
      set booked = t.booked - multirange(p_during * tstzrange(t.utc_day at time zone 'UTC',
                                                              (t.utc_day + 1) at time zone 'UTC'))
      where t.unit_id = p_unit_id and t.utc_day between v_first and v_last;
  end if;
end
$function$;

CREATE OR REPLACE FUNCTION public.booking_event_details(b bookings)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  select jsonb_build_object(
    'resource_id', b.resource_id, 'slot_start', iso_utc(b.slot_start), 'slot_end', iso_utc(b.slot_end),
    'price_rupees', b.price_rupees, 'status', b.status, 'hold_id', b.hold_id)
    || case when b.hold_group_id is null then '{}'::jsonb
            else jsonb_build_object('hold_group_id', b.hold_group_id) end
    || case when b.series_id is null then '{}'::jsonb
            else jsonb_build_object('series_id', b.series_id,
                                    'series_occurrence_index', b.series_occurrence_index) end
$function$;

CREATE OR REPLACE FUNCTION public.check_availability_access(p_partner_id uuid, p_venue_id uuid, p_one_resource boolean, p_resource_id uuid)
 RETURNS void
 LANGUAGE plpgsql
 STABLE
AS $function$
begin
  if not exists (select from authorized_venues(p_partner_id) v where v.id = p_venue_id) then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  if p_one_resource and not exists (
    select from resources r where r.id = p_resource_id and r.venue_id = p_venue_id) then
    raise exception using errcode = 'PB000', message = 'resource_not_in_venue';
  end if;
end
$function$;

CREATE OR REPLACE FUNCTION public.claim_idempotency_key(p_partner_id uuid, p_key text, p_operation text, p_fingerprint text)
 RETURNS idempotency_keys
 LANGUAGE plpgsql
AS $function$
declare
  v_record idempotency_keys;
begin
  insert into idempotency_keys (partner_id, key, operation, fingerprint)
    values (p_partner_id, p_key, p_operation, p_fingerprint) on conflict do nothing;
  if found then
    return null;
  end if;
  select k.* into v_record from idempotency_keys k where k.partner_id = p_partner_id and k.key = p_key;
  return v_record;
end
$function$;

CREATE OR REPLACE FUNCTION public.confirm_hold(p_partner_id uuid, p_key text, p_fingerprint text, p_hold_id uuid, p_payment_reference text, p_customer_name text, p_customer_phone text, p_customer_email text, p_use_package_credit boolean, OUT replayed boolean, OUT operation text, OUT fingerprint text, OUT result jsonb, OUT response json)
 RETURNS record
 LANGUAGE sql
AS $function$
  select * from confirm_hold(null, p_partner_id, p_key, p_fingerprint, p_hold_id, p_payment_reference,
                             p_customer_name, p_customer_phone, p_customer_email, p_use_package_credit)
$function$;

CREATE OR REPLACE FUNCTION public.confirm_hold(p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_hold_id uuid, p_payment_reference text, p_customer_name text, p_customer_phone text, p_customer_email text, p_use_package_credit boolean, OUT replayed boolean, OUT operation text, OUT fingerprint text, OUT result jsonb, OUT response json)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
declare
  v_hold holds;
  v_purchase uuid;
  v_booking bookings;
  v_used idempotency_keys;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  v_used := lock_idempotency_key(p_partner_id, p_key);
  if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
    select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
      into replayed, operation, fingerprint, result, response;
    return;
  end if;

  -- The spec's order: it exists, it is the caller's, its venue is still the caller's. Only the
  -- caller's own hold is locked: another partner's id must not make its owner's writes wait.
  select h.* into v_hold from holds h where h.id = p_hold_id and h.partner_id = p_partner_id for update;
  if not found then
    if exists (select from holds h where h.id = p_hold_id) then
      raise exception using errcode = 'PB000', message = 'not_owner';
    end if;
    raise exception using errcode = 'PB000', message = 'hold_not_found';
  end if;
  if not venue_authorized(p_partner_id, v_hold.venue_id) then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  -- A grouped hold is confirmed only with its group, whatever its state.
  if v_hold.hold_group_id is not null then
    raise exception using errcode = 'PB000', message = 'hold_in_group', detail = v_hold.hold_group_id::text;
  end if;
  if hold_is_expired(v_hold) then
    raise exception using errcode = 'PB000', message = 'hold_expired';
  end if;
  if v_hold.status <> 'ACTIVE' then
    raise exception using errcode = 'PB000', message = 'invalid_hold_state', detail = v_hold.status;
  end if;
  if not hold_is_intact(v_hold) then
    raise exception using errcode = 'PB000', message = 'double_booking';
  end if;
  -- A member's price is for that member (CONTRACT.md, "Hardening answers").
  if v_hold.discount_percent > 0 and p_customer_phone is distinct from v_hold.customer_phone then
    raise exception using errcode = 'PB000', message = 'not_the_member';
  end if;
  if p_use_package_credit then
    -- The caller's purchase for this customer and venue that expires first, locked: a concurrent
    -- confirm that emptied it first makes the lock's recheck skip it to the next, so the last
    -- credit is taken once and none goes below zero. None left: a paid confirm (CONTRACT.md).
    update package_purchases p set credits_remaining = p.credits_remaining - 1
      from (select pp.id from package_purchases pp
             where pp.partner_id = p_partner_id and pp.venue_id = v_hold.venue_id
               and pp.customer_phone = p_customer_phone and pp.credits_remaining > 0 and pp.expires_at > now()
             order by pp.expires_at, pp.id
             limit 1
             for update) c
     where p.id = c.id
     returning p.id into v_purchase;
  end if;

  update holds set status = 'CONFIRMED', updated_at = now() where id = v_hold.id;
  perform book_reservations(array[v_hold.id]);
  insert into bookings (hold_id, partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, price_rupees,
                        payment_reference, payment_method, package_purchase_id, customer_name, customer_phone,
                        customer_email)
    values (v_hold.id, v_hold.partner_id, v_hold.venue_id, v_hold.resource_id, v_hold.slot_id, v_hold.slot_start,
            v_hold.slot_end, v_hold.price_rupees, p_payment_reference,
            case when v_purchase is not null then 'package' end, v_purchase, p_customer_name, p_customer_phone,
            p_customer_email)
    returning * into v_booking;
  perform record_booking_event(v_booking, 'booking_created', null); -- (the trace is set above)

  replayed := false;
  result := jsonb_build_object('booking', to_jsonb(v_booking), 'package_credit_consumed',
    case when p_use_package_credit is not null then v_purchase is not null end);
  perform store_idempotency_key(p_partner_id, p_key, 'confirm', p_fingerprint, result);
end
$function$;

CREATE OR REPLACE FUNCTION public.confirm_hold_group(p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_group_id uuid, p_payment_reference text, p_customer_name text, p_customer_phone text, p_customer_email text, p_use_package_credit boolean, OUT replayed boolean, OUT operation text, OUT fingerprint text, OUT result jsonb, OUT response json)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
declare
  v_group hold_groups;
  v_used idempotency_keys;
  v_count integer;
  v_take boolean := false;
  v_hold holds;
  v_purchase uuid;
  v_booking_id uuid;
  v_booking_ids uuid[] := '{}';
  v_hold_ids uuid[];
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  -- Only the caller's own group is locked: another partner's id must not make its owner wait.
  select g.* into v_group from hold_groups g where g.id = p_group_id and g.partner_id = p_partner_id for update;
  if not found then
    if exists (select from hold_groups g where g.id = p_group_id) then
      raise exception using errcode = 'PB000', message = 'not_owner';
    end if;
    raise exception using errcode = 'PB000', message = 'hold_group_not_found';
  end if;
  if not venue_authorized(p_partner_id, v_group.venue_id) then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  v_used := lock_idempotency_key(p_partner_id, p_key);
  if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
    select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
      into replayed, operation, fingerprint, result, response;
    return;
  end if;
  if v_group.status in ('CONFIRMED', 'CANCELLED') then
    raise exception using errcode = 'PB000', message = 'invalid_hold_state', detail = v_group.status;
  end if;
  if v_group.status = 'EXPIRED' or v_group.hold_expiry_at <= now() then
    raise exception using errcode = 'PB000', message = 'hold_expired';
  end if;
  -- The group's holds, locked, in item order. Read by id from here on: a group's holds are few,
  -- and the plans stay index lookups however the table's statistics guess.
  v_hold_ids := array(select h.id from holds h where h.hold_group_id = v_group.id order by h.item_index for update);
  if exists (select from holds h where h.id = any (v_hold_ids) and not hold_is_intact(h)) then
    raise exception using errcode = 'PB000', message = 'double_booking';
  end if;
  -- A member's price is for that member (CONTRACT.md, "Hardening answers").
  if exists (select from holds h where h.id = any (v_hold_ids)
                and h.discount_percent > 0 and p_customer_phone is distinct from h.customer_phone) then
    raise exception using errcode = 'PB000', message = 'not_the_member';
  end if;

  v_count := cardinality(v_hold_ids);
  if p_use_package_credit then
    -- Locked first, so the count stands until the credits are taken.
    perform from package_purchases pp
      where pp.partner_id = p_partner_id and pp.venue_id = v_group.venue_id
        and pp.customer_phone = p_customer_phone and pp.credits_remaining > 0 and pp.expires_at > now()
      order by pp.expires_at, pp.id
      for update;
    v_take := (select coalesce(sum(pp.credits_remaining), 0) from package_purchases pp
                where pp.partner_id = p_partner_id and pp.venue_id = v_group.venue_id
                  and pp.customer_phone = p_customer_phone and pp.expires_at > now()) >= v_count;
  end if;

  perform book_reservations(v_hold_ids);
  update holds set status = 'CONFIRMED', updated_at = now() where id = any (v_hold_ids);
  for v_hold in select h.* from holds h where h.id = any (v_hold_ids) order by h.item_index loop
    v_purchase := null;
    if v_take then
      update package_purchases p set credits_remaining = p.credits_remaining - 1
        from (select pp.id from package_purchases pp
               where pp.partner_id = p_partner_id and pp.venue_id = v_group.venue_id
                 and pp.customer_phone = p_customer_phone and pp.credits_remaining > 0 and pp.expires_at > now()
               order by pp.expires_at, pp.id
               limit 1) c
       where p.id = c.id
       returning p.id into v_purchase;
    end if;
    insert into bookings (hold_id, partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, price_rupees,
                          payment_reference, payment_method, package_purchase_id, customer_name, customer_phone,
                          customer_email, hold_group_id, series_id, series_occurrence_index)
      values (v_hold.id, v_hold.partner_id, v_hold.venue_id, v_hold.resource_id, v_hold.slot_id, v_hold.slot_start,
              v_hold.slot_end, v_hold.price_rupees, p_payment_reference,
              case when v_purchase is not null then 'package' end, v_purchase, p_customer_name, p_customer_phone,
              p_customer_email, v_group.id, v_hold.series_id, v_hold.series_occurrence_index)
      returning id into v_booking_id;
    v_booking_ids := v_booking_ids || v_booking_id;
  end loop;
  perform record_booking_events('booking_created', v_booking_ids, null);
  update hold_groups set status = 'CONFIRMED', confirmed_at = now(), updated_at = now() where id = v_group.id;

  replayed := false;
  result := hold_group_json(v_group.id) || jsonb_build_object('package_credits_consumed',
    case when p_use_package_credit is not null then case when v_take then v_count else 0 end end);
  perform store_idempotency_key(p_partner_id, p_key, 'hold_group_confirm', p_fingerprint, result);
end
$function$;

CREATE OR REPLACE FUNCTION public.confirm_hold_traced(p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_hold_id uuid, p_payment_reference text, p_customer_name text, p_customer_phone text, p_customer_email text, p_use_package_credit boolean, OUT replayed boolean, OUT operation text, OUT fingerprint text, OUT result jsonb, OUT response json)
 RETURNS record
 LANGUAGE sql
AS $function$
  select * from confirm_hold(p_trace, p_partner_id, p_key, p_fingerprint, p_hold_id, p_payment_reference,
                             p_customer_name, p_customer_phone, p_customer_email, p_use_package_credit)
$function$;

CREATE OR REPLACE FUNCTION public.event_recipients(p_venue_id uuid, p_event_type text)
 RETURNS TABLE(subscription_id uuid, partner_id uuid)
 LANGUAGE sql
 STABLE
AS $function$
  select s.id, s.partner_id
    from venues v
    join venue_grants g on g.venue_id = v.id
    join webhook_subscriptions s on s.partner_id = g.partner_id
   where v.id = p_venue_id and v.status <> 'archived' and s.is_active and p_event_type = any (s.event_types)
$function$;

CREATE OR REPLACE FUNCTION public.hold_event_details(h holds)
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  select jsonb_build_object(
    'resource_id', h.resource_id, 'slot_start', iso_utc(h.slot_start), 'slot_end', iso_utc(h.slot_end),
    'price_rupees', h.price_rupees, 'hold_expiry_at', iso_utc(h.hold_expiry_at), 'status', h.status)
    || case when h.hold_group_id is null then '{}'::jsonb
            else jsonb_build_object('hold_group_id', h.hold_group_id) end
    || case when h.series_id is null then '{}'::jsonb
            else jsonb_build_object('series_id', h.series_id,
                                    'series_occurrence_index', h.series_occurrence_index) end
$function$;

CREATE OR REPLACE FUNCTION public.hold_group_items(p_group hold_groups, p_resources uuid[], p_starts timestamp with time zone[], p_minutes integer[], p_prices integer[], p_discount integer, p_occurrences integer[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
declare
  v_hold_ids uuid[];
begin
  with held as (
    insert into holds (partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, hold_expiry_at,
                       price_rupees, customer_phone, discount_percent, hold_group_id, item_index, series_id,
                       series_occurrence_index)
    select p_group.partner_id, p_group.venue_id, x.resource_id, slot_id(x.resource_id, x.start), x.start,
           x.start + make_interval(mins => x.minutes), p_group.hold_expiry_at, x.price, p_group.customer_phone,
           p_discount, p_group.id, x.n - 1, p_group.series_id, p_occurrences[x.n]
      from unnest(p_resources, p_starts, p_minutes, p_prices) with ordinality as x(resource_id, start, minutes, price, n)
    returning *
  ), reserved as (
    insert into reservations (hold_id, unit_id, resource_id, during, expires_at)
    select h.id, u, h.resource_id, tstzrange(h.slot_start, h.slot_end), h.hold_expiry_at
      from held h, unnest(resource_units(h.resource_id)) u
  )
  select array_agg(h.id order by h.item_index) into v_hold_ids from held h;
  perform record_availability_change(p_group.venue_id, p_resources,
    array(select tstzrange(x.start, x.start + make_interval(mins => x.minutes))
            from unnest(p_starts, p_minutes) with ordinality as x(start, minutes, n) order by x.n));
  perform record_hold_events('hold_created', v_hold_ids, null);
  perform from send_job_hold_group_expire(jsonb_build_object('hold_group_id', p_group.id) || job_trace(),
                                          p_group.hold_expiry_at);
end
$function$;

CREATE OR REPLACE FUNCTION public.hold_group_json(p_group_id uuid)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
begin
  return (
    select jsonb_build_object(
      'read_at', now(),
      'group', to_jsonb(g),
      'holds', (select jsonb_agg(jsonb_build_object('hold', to_jsonb(h), 'booking', to_jsonb(b)) order by h.item_index)
                  from holds h left join bookings b on b.hold_id = h.id
                 where h.hold_group_id = g.id))
      from hold_groups g where g.id = p_group_id
  );
end
$function$;

CREATE OR REPLACE FUNCTION public.hold_is_expired(h holds)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
  select h.status = 'EXPIRED' or (h.status = 'ACTIVE' and h.hold_expiry_at <= now())
$function$;

CREATE OR REPLACE FUNCTION public.hold_is_intact(h holds)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
begin
  return (select count(*) from reservations rv where rv.hold_id = h.id and reservation_is_live(rv))
         = cardinality(resource_units(h.resource_id));
end
$function$;

CREATE OR REPLACE FUNCTION public.iso_utc(t timestamp with time zone)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
  select to_char(t at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
$function$;

CREATE OR REPLACE FUNCTION public.job_trace()
 RETURNS jsonb
 LANGUAGE sql
 STABLE
AS $function$
  select case when coalesce(current_setting('booking.trace', true), '') = '' then '{}'::jsonb
              else jsonb_build_object('trace', current_setting('booking.trace', true)::jsonb) end
$function$;

CREATE OR REPLACE FUNCTION public.judge_series(p_venue venues, p_resource resources, p_first_date date, p_start_time time without time zone, p_minutes integer, p_count integer, p_interval_weeks integer, p_excluded date[], p_lock boolean)
 RETURNS TABLE(occurrence_index integer, local_date date, slot_start timestamp with time zone, slot_end timestamp with time zone, utc_offset text, excluded boolean, reason text, overdue uuid[])
 LANGUAGE plpgsql
AS $function$
declare
  v_units uuid[] := resource_units(p_resource.id);
  v_window record;
  v_reasons text[] := '{}';
  v_keys bigint[] := '{}';
  v_claim record;
  i integer;
begin
  -- First every window and the venue's rules, gathering the lock keys of the holdable ones ...
  for v_window in select * from series_windows(p_venue, p_resource, p_first_date, p_start_time, p_minutes,
                                               p_count, p_interval_weeks) loop
    if v_window.local_date = any (p_excluded) then
      v_reasons := v_reasons || null::text;
    elsif v_window.slot_start is null then
      v_reasons := v_reasons || 'NOT_ON_GRID'::text;
    else
      v_reasons := v_reasons || window_rule_refusal(p_venue, p_resource, v_window.slot_start, p_minutes,
                                  coalesce(p_venue.series_max_advance_days, p_venue.max_advance_days));
      if p_lock and v_reasons[cardinality(v_reasons)] is null then
        v_keys := v_keys || array(select k from reservation_window_locks(v_units,
                                    tstzrange(v_window.slot_start, v_window.slot_end)) k);
      end if;
    end if;
  end loop;
  if p_lock then
    perform take_advisory_locks(v_keys);
  end if;
  -- ... then, under the locks, what is taken.
  i := 0;
  for v_window in select * from series_windows(p_venue, p_resource, p_first_date, p_start_time, p_minutes,
                                               p_count, p_interval_weeks) loop
    i := i + 1;
    occurrence_index := v_window.occurrence_index;
    local_date := v_window.local_date;
    excluded := v_window.local_date = any (p_excluded);
    -- An excluded occurrence shows no window.
    slot_start := case when not excluded then v_window.slot_start end;
    slot_end := case when not excluded then v_window.slot_end end;
    utc_offset := case when not excluded then v_window.utc_offset end;
    reason := v_reasons[i];
    overdue := null;
    if not excluded and reason is null then
      select c.conflict, c.overdue into v_claim
        from window_claims(p_resource.id, v_units, tstzrange(v_window.slot_start, v_window.slot_end)) c;
      reason := v_claim.conflict;
      overdue := v_claim.overdue;
    end if;
    return next;
  end loop;
end
$function$;

CREATE OR REPLACE FUNCTION public.lock_idempotency_key(p_partner_id uuid, p_key text)
 RETURNS idempotency_keys
 LANGUAGE plpgsql
AS $function$
declare
  v_record idempotency_keys;
begin
  perform pg_advisory_xact_lock(1768188793, hashtext(p_partner_id::text || '/' || p_key));
  select k.* into v_record from idempotency_keys k where k.partner_id = p_partner_id and k.key = p_key;
  return v_record;
end
$function$;

CREATE OR REPLACE FUNCTION public.lock_reservation_windows(p_units uuid[], p_during tstzrange)
 RETURNS void
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
begin
  -- (In FROM, an SQL set-returning function is inlined into the query rather than run apart.)
  perform take_advisory_locks(array(select k from reservation_window_locks(p_units, p_during) k));
end
$function$;

CREATE OR REPLACE FUNCTION public.membership_discount(p_venue_id uuid, p_customer_phone text)
 RETURNS integer
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
begin
  return (
    select coalesce(max(m.discount_percent), 0) from memberships m
     where m.venue_id = p_venue_id and m.customer_phone = p_customer_phone
       and (m.expires_at is null or m.expires_at > now())
  );
end
$function$;

CREATE OR REPLACE FUNCTION public.place_hold(p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_resource_id uuid, p_start timestamp with time zone, p_minutes integer, p_customer_phone text, OUT replayed boolean, OUT operation text, OUT fingerprint text, OUT result jsonb, OUT response json)
 RETURNS record
 LANGUAGE sql
AS $function$
  select * from place_hold(null, p_partner_id, p_key, p_fingerprint, p_venue_id, p_resource_id, p_start,
                           p_minutes, p_customer_phone)
$function$;

CREATE OR REPLACE FUNCTION public.place_hold(p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_resource_id uuid, p_start timestamp with time zone, p_minutes integer, p_customer_phone text, OUT replayed boolean, OUT operation text, OUT fingerprint text, OUT result jsonb, OUT response json)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
declare
  v_end timestamptz := p_start + make_interval(mins => p_minutes);
  v_venue venues;
  v_resource resources;
  v_units uuid[];
  v_count integer;
  v_first timestamptz;
  v_bookable boolean;
  v_full_price integer;
  v_discount integer;
  v_conflict text;
  v_overdue uuid[];
  v_hold holds;
  v_used idempotency_keys;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  v_used := lock_idempotency_key(p_partner_id, p_key);
  if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
    select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
      into replayed, operation, fingerprint, result, response;
    return;
  end if;

  select v.* into v_venue from authorized_venues(p_partner_id) v where v.id = p_venue_id;
  if not found then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  select r.* into v_resource from resources r where r.id = p_resource_id and r.venue_id = v_venue.id;
  if not found then
    raise exception using errcode = 'PB000', message = 'resource_not_in_venue';
  end if;
  if v_venue.status <> 'active' then
    raise exception using errcode = 'PB000', message = 'venue_paused';
  end if;
  if p_minutes % v_resource.duration_minutes <> 0 then
    raise exception using errcode = 'PB000', message = 'duration_not_multiple',
      detail = v_resource.duration_minutes::text;
  end if;
  select count(*), min(s.slot_start), coalesce(bool_and(s.bookable), false), sum(s.price_rupees)
    into v_count, v_first, v_bookable, v_full_price
    from venue_slots(v_venue.id, (p_start at time zone v_venue.timezone)::date, v_resource.id, p_start, v_end) s;
  if v_first is distinct from p_start or v_count * v_resource.duration_minutes <> p_minutes then
    raise exception using errcode = 'PB000', message = 'not_on_grid';
  end if;
  if not v_bookable then
    raise exception using errcode = 'PB000', message = 'not_bookable';
  end if;
  v_discount := membership_discount(v_venue.id, p_customer_phone);

  v_units := resource_units(v_resource.id);
  perform lock_reservation_windows(v_units, tstzrange(p_start, v_end));
  select c.conflict, c.overdue into v_conflict, v_overdue
    from window_claims(v_resource.id, v_units, tstzrange(p_start, v_end)) c;
  if v_conflict is not null then
    raise exception using errcode = 'PB000',
      message = case v_conflict when 'TAKEN' then 'slot_taken' else 'transformation_conflict' end;
  end if;
  if v_overdue is not null then
    -- A hold past its expiry blocks nobody; the caller expires it (as its job would) and retries.
    raise exception using errcode = 'PB000', message = 'overdue', detail = array_to_string(v_overdue, ',');
  end if;

  insert into holds (partner_id, venue_id, resource_id, slot_id, slot_start, slot_end, hold_expiry_at,
                     price_rupees, customer_phone, discount_percent)
    values (p_partner_id, v_venue.id, v_resource.id, slot_id(v_resource.id, p_start), p_start, v_end,
            now() + make_interval(secs => v_venue.hold_seconds),
            round((v_full_price * (100 - v_discount))::numeric / 100)::integer, p_customer_phone, v_discount)
    returning * into v_hold;
  insert into reservations (hold_id, unit_id, resource_id, during, expires_at)
    select v_hold.id, u, v_hold.resource_id, tstzrange(v_hold.slot_start, v_hold.slot_end), v_hold.hold_expiry_at
      from unnest(v_units) u;
  perform record_availability_change(v_venue.id, array[v_hold.resource_id], array[tstzrange(p_start, v_end)]);
  perform record_hold_event(v_hold, 'hold_created', null); -- (the trace is the transaction's already)
  perform from send_job_hold_expire(jsonb_build_object('hold_id', v_hold.id) || job_trace(), v_hold.hold_expiry_at);

  replayed := false;
  result := to_jsonb(v_hold);
  perform store_idempotency_key(p_partner_id, p_key, 'hold', p_fingerprint, result);
end
$function$;

CREATE OR REPLACE FUNCTION public.place_hold_group(p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_items jsonb, p_customer_phone text, OUT replayed boolean, OUT operation text, OUT fingerprint text, OUT result jsonb, OUT response json)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
declare
  v_count integer := jsonb_array_length(p_items);
  v_overlapping text;
  v_venue venues;
  v_resource resources;
  v_used idempotency_keys;
  v_discount integer;
  v_resources uuid[] := '{}';
  v_named text;
  v_starts timestamptz[] := '{}';
  v_minutes integer[] := '{}';
  v_reasons text[] := '{}';
  v_keys bigint[] := '{}';
  v_overdue uuid[] := '{}';
  v_conflict text;
  v_in_the_way uuid[];
  v_prices integer[];
  v_group hold_groups;
  i integer;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;

  -- 1. Items that overlap an earlier one (windows that only touch do not), before the venue is
  -- judged, as the contract orders: a whole and its part overlap at any venue, granted or not.
  -- That tells a caller no more than a TRANSFORMATION_CONFLICT tells any partner granted the venue,
  -- and only of resource ids it was shown while it was granted.
  with item as (
    select (e.n - 1)::integer as i, coalesce(r.id::text, e.item ->> 'resource_id') as resource,
           case when r.id is not null then resource_units(r.id) end as units,
           tstzrange((e.item ->> 'slot_start')::timestamptz,
                     (e.item ->> 'slot_start')::timestamptz
                       + make_interval(mins => (e.item ->> 'slot_duration_minutes')::integer)) as during
      from jsonb_array_elements(p_items) with ordinality as e(item, n)
      left join resources r
        on r.venue_id = p_venue_id
       and r.id = case when e.item ->> 'resource_id' ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$'
                       then (e.item ->> 'resource_id')::uuid end
  )
  select string_agg(j.i::text, ',' order by j.i) into v_overlapping
    from item j
   where exists (select from item k
                  where k.i < j.i and k.during && j.during
                    and (k.resource = j.resource or k.units && j.units));
  if v_overlapping is not null then
    raise exception using errcode = 'PB000', message = 'items_overlap', detail = v_overlapping;
  end if;

  -- 2. The venue.
  select v.* into v_venue from authorized_venues(p_partner_id) v where v.id = p_venue_id;
  if not found then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;

  -- 3. The key.
  v_used := lock_idempotency_key(p_partner_id, p_key);
  if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
    select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
      into replayed, operation, fingerprint, result, response;
    return;
  end if;

  -- 4. Each item: its resource and the venue's rules.
  for i in 0 .. v_count - 1 loop
    v_starts := v_starts || (p_items -> i ->> 'slot_start')::timestamptz;
    v_minutes := v_minutes || (p_items -> i ->> 'slot_duration_minutes')::integer;
    v_named := p_items -> i ->> 'resource_id';
    select r.* into v_resource from resources r
     where r.venue_id = v_venue.id
       and r.id = case when v_named ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then v_named::uuid end;
    if not found then
      v_resources := v_resources || null::uuid;
      v_reasons := v_reasons || 'UNKNOWN_RESOURCE'::text;
      continue;
    end if;
    v_resources := v_resources || v_resource.id;
    v_reasons := v_reasons || window_rule_refusal(v_venue, v_resource, v_starts[i + 1], v_minutes[i + 1],
                                                  v_venue.max_advance_days);
    if v_reasons[i + 1] is null then
      v_keys := v_keys || array(select k from reservation_window_locks(resource_units(v_resource.id),
                                  tstzrange(v_starts[i + 1], v_starts[i + 1] + make_interval(mins => v_minutes[i + 1]))) k);
    end if;
  end loop;

  -- ... then, under the locks of every window, what is taken.
  perform take_advisory_locks(v_keys);
  for i in 1 .. v_count loop
    continue when v_reasons[i] is not null;
    select c.conflict, c.overdue into v_conflict, v_in_the_way
      from window_claims(v_resources[i], resource_units(v_resources[i]),
                         tstzrange(v_starts[i], v_starts[i] + make_interval(mins => v_minutes[i]))) c;
    v_reasons[i] := v_conflict;
    v_overdue := v_overdue || coalesce(v_in_the_way, '{}');
  end loop;
  if exists (select from unnest(v_reasons) r where r is not null) then
    raise exception using errcode = 'PB000', message = 'items_refused',
      detail = (select jsonb_agg(jsonb_build_object('item', n - 1, 'reason', r) order by n)
                  from unnest(v_reasons) with ordinality as x(r, n) where r is not null)::text;
  end if;
  if cardinality(v_overdue) > 0 then
    raise exception using errcode = 'PB000', message = 'overdue', detail = array_to_string(v_overdue, ',');
  end if;

  -- Every item held, as one group (hold_group_items()).
  v_discount := membership_discount(v_venue.id, p_customer_phone);
  v_prices := array(select window_price(v_venue, r, x.start, x.minutes, v_discount)
                      from unnest(v_resources, v_starts, v_minutes) with ordinality as x(resource_id, start, minutes, n)
                      join resources r on r.id = x.resource_id
                     order by x.n);
  insert into hold_groups (partner_id, venue_id, hold_expiry_at, price_rupees, customer_phone)
    values (p_partner_id, v_venue.id, now() + make_interval(secs => v_venue.hold_seconds),
            (select sum(p) from unnest(v_prices) p), p_customer_phone)
    returning * into v_group;
  perform hold_group_items(v_group, v_resources, v_starts, v_minutes, v_prices, v_discount, null);

  replayed := false;
  result := hold_group_json(v_group.id);
  perform store_idempotency_key(p_partner_id, p_key, 'hold_group', p_fingerprint, result);
end
$function$;

CREATE OR REPLACE FUNCTION public.place_hold_traced(p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_resource_id uuid, p_start timestamp with time zone, p_minutes integer, p_customer_phone text, OUT replayed boolean, OUT operation text, OUT fingerprint text, OUT result jsonb, OUT response json)
 RETURNS record
 LANGUAGE sql
AS $function$
  select * from place_hold(p_trace, p_partner_id, p_key, p_fingerprint, p_venue_id, p_resource_id, p_start,
                           p_minutes, p_customer_phone)
$function$;

CREATE OR REPLACE FUNCTION public.place_series(p_trace text, p_partner_id uuid, p_key text, p_fingerprint text, p_venue_id uuid, p_resource_id text, p_first_date date, p_start_time time without time zone, p_minutes integer, p_count integer, p_interval_weeks integer, p_excluded date[], p_customer_phone text, p_on_conflict text, p_min_occurrences integer, OUT replayed boolean, OUT operation text, OUT fingerprint text, OUT result jsonb, OUT response json)
 RETURNS record
 LANGUAGE plpgsql
AS $function$
declare
  v_venue venues;
  v_resource resources;
  v_used idempotency_keys;
  v_judged record;
  v_indexes integer[] := '{}';
  v_starts timestamptz[] := '{}';
  v_failing jsonb := '[]';
  v_overdue uuid[] := '{}';
  v_occurrences jsonb := '[]';
  v_discount integer;
  v_prices integer[];
  v_series_id uuid := gen_random_uuid();
  v_group hold_groups;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;

  -- 1. The venue, then the resource.
  select v.* into v_venue from authorized_venues(p_partner_id) v where v.id = p_venue_id;
  if not found then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  select r.* into v_resource from resources r
   where r.venue_id = v_venue.id
     and r.id = case when p_resource_id ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then p_resource_id::uuid end;
  if not found then
    raise exception using errcode = 'PB000', message = 'unknown_resource';
  end if;

  -- 2. The key.
  v_used := lock_idempotency_key(p_partner_id, p_key);
  if v_used.key is not null then -- (a row IS NOT NULL only when every column is)
    select true, v_used.operation, v_used.fingerprint, v_used.result, v_used.response
      into replayed, operation, fingerprint, result, response;
    return;
  end if;

  -- 3. Every occurrence, under the locks of its window.
  for v_judged in
    select * from judge_series(v_venue, v_resource, p_first_date, p_start_time, p_minutes, p_count,
                               p_interval_weeks, p_excluded, true)
  loop
    v_occurrences := v_occurrences || jsonb_build_object(
      'occurrence_index', v_judged.occurrence_index, 'local_date', v_judged.local_date,
      'slot_start', v_judged.slot_start, 'slot_end', v_judged.slot_end, 'utc_offset', v_judged.utc_offset,
      'created_status', case when v_judged.excluded then 'EXCLUDED'
                             when v_judged.reason is not null then 'SKIPPED' else 'HELD' end,
      'reason', v_judged.reason);
    if v_judged.excluded then
      continue;
    elsif v_judged.reason is not null then
      v_failing := v_failing || jsonb_build_object('occurrence', v_judged.occurrence_index,
                                                   'reason', v_judged.reason, 'local_date', v_judged.local_date);
    else
      v_indexes := v_indexes || v_judged.occurrence_index;
      v_starts := v_starts || v_judged.slot_start;
      v_overdue := v_overdue || coalesce(v_judged.overdue, '{}');
    end if;
  end loop;
  if jsonb_array_length(v_failing) > 0
     and (p_on_conflict = 'reject' or cardinality(v_indexes) < p_min_occurrences) then
    raise exception using errcode = 'PB000', message = 'occurrences_refused', detail = v_failing::text;
  end if;
  if cardinality(v_overdue) > 0 then
    raise exception using errcode = 'PB000', message = 'overdue', detail = array_to_string(v_overdue, ',');
  end if;

  -- The held occurrences, as one group naming the series.
  v_discount := membership_discount(v_venue.id, p_customer_phone);
  v_prices := array(select window_price(v_venue, v_resource, s, p_minutes, v_discount)
                      from unnest(v_starts) with ordinality as x(s, n) order by x.n);
  insert into hold_groups (partner_id, venue_id, series_id, hold_expiry_at, price_rupees, customer_phone)
    values (p_partner_id, v_venue.id, v_series_id, now() + make_interval(secs => v_venue.hold_seconds),
            (select sum(p) from unnest(v_prices) p), p_customer_phone)
    returning * into v_group;
  insert into series (id, partner_id, venue_id, resource_id, hold_group_id, timezone, first_date, start_time,
                      slot_duration_minutes, count, interval_weeks, price_rupees)
    values (v_series_id, p_partner_id, v_venue.id, v_resource.id, v_group.id, v_venue.timezone, p_first_date,
            p_start_time, p_minutes, p_count, p_interval_weeks, v_group.price_rupees);
  perform hold_group_items(v_group, array_fill(v_resource.id, array[cardinality(v_starts)]), v_starts,
                           array_fill(p_minutes, array[cardinality(v_starts)]), v_prices, v_discount, v_indexes);
  insert into series_occurrences (series_id, occurrence_index, local_date, slot_start, slot_end, utc_offset,
                                  created_status, reason, price_rupees, hold_id)
  select v_series_id, (o ->> 'occurrence_index')::integer, (o ->> 'local_date')::date,
         (o ->> 'slot_start')::timestamptz, (o ->> 'slot_end')::timestamptz, o ->> 'utc_offset',
         o ->> 'created_status', o ->> 'reason', h.price_rupees, h.id
    from jsonb_array_elements(v_occurrences) o
    left join holds h on h.hold_group_id = v_group.id
                     and h.item_index = array_position(v_indexes, (o ->> 'occurrence_index')::integer) - 1;

  replayed := false;
  result := series_json(v_series_id);
  perform store_idempotency_key(p_partner_id, p_key, 'series', p_fingerprint, result);
end
$function$;

CREATE OR REPLACE FUNCTION public.preview_series(p_partner_id uuid, p_venue_id uuid, p_resource_id text, p_first_date date, p_start_time time without time zone, p_minutes integer, p_count integer, p_interval_weeks integer, p_excluded date[], p_customer_phone text)
 RETURNS jsonb
 LANGUAGE plpgsql
AS $function$
declare
  v_venue venues;
  v_resource resources;
  v_discount integer;
begin
  select v.* into v_venue from authorized_venues(p_partner_id) v where v.id = p_venue_id;
  if not found then
    raise exception using errcode = 'PB000', message = 'venue_not_authorized';
  end if;
  select r.* into v_resource from resources r
   where r.venue_id = v_venue.id
     and r.id = case when p_resource_id ~* '^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$' then p_resource_id::uuid end;
  if not found then
    raise exception using errcode = 'PB000', message = 'unknown_resource';
  end if;
  v_discount := membership_discount(v_venue.id, p_customer_phone);
  return jsonb_build_object(
    'timezone', v_venue.timezone,
    'occurrences', (
      select jsonb_agg(to_jsonb(j) || jsonb_build_object('price_rupees',
               case when not j.excluded and j.reason is null
                    then window_price(v_venue, v_resource, j.slot_start, p_minutes, v_discount) end)
             order by j.occurrence_index)
        from judge_series(v_venue, v_resource, p_first_date, p_start_time, p_minutes, p_count, p_interval_weeks,
                          p_excluded, false) j));
end
$function$;

CREATE OR REPLACE FUNCTION public.prune_availability_changes(p_retention_seconds integer, p_batch integer)
 RETURNS integer
 LANGUAGE plpgsql
AS $function$
declare
  v_deleted integer;
begin
  perform sequence_availability_changes();
  with gone as (
    delete from availability_changes c
     where c.id in (select o.id from availability_changes o
                     where o.recorded_at < now() - make_interval(secs => p_retention_seconds)
                       and o.position is not null
                     order by o.recorded_at
                     limit p_batch)
    returning c.venue_id, c.position
  ), by_venue as (
    insert into availability_change_purges as p (venue_id, through_position)
    select g.venue_id, max(g.position) from gone g group by g.venue_id
    on conflict (venue_id) do update set through_position = greatest(p.through_position, excluded.through_position)
  )
  select count(*) into v_deleted from gone;
  return v_deleted;
end
$function$;

CREATE OR REPLACE FUNCTION public.publish_event(p_event_id uuid)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
begin
  perform publish_events(array[p_event_id]);
end
$function$;

CREATE OR REPLACE FUNCTION public.publish_event(p_event_id uuid, p_trace text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  perform publish_event(p_event_id);
end
$function$;

CREATE OR REPLACE FUNCTION public.publish_events(p_event_ids uuid[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
begin
  insert into webhook_deliveries (event_id, subscription_id, partner_id, next_attempt_id, next_attempt_at, trace)
  select e.id, s.subscription_id, s.partner_id, gen_random_uuid(), now(), nullif(current_setting('booking.trace', true), '')
    from events e
   cross join lateral event_recipients(e.venue_id, e.event_type) s
   where e.id = any (p_event_ids)
  on conflict (event_id, subscription_id) do nothing;
  if found then
    perform pg_notify('webhook_attempts_due', '');
  end if;
end
$function$;

CREATE OR REPLACE FUNCTION public.queue_delivery_attempt(p_delivery_id uuid, p_attempt_id uuid)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
begin
  perform pg_notify('webhook_attempts_due', '');
end
$function$;

CREATE OR REPLACE FUNCTION public.record_availability_change(p_venue_id uuid, p_resource_ids uuid[], p_windows tstzrange[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
begin
  insert into availability_changes (venue_id, kind, resource_ids, windows)
    values (p_venue_id, 'slot', p_resource_ids, p_windows);
end
$function$;

CREATE OR REPLACE FUNCTION public.record_availability_range(p_venue_id uuid, p_resource_id uuid, p_from date, p_to date, p_reason text)
 RETURNS void
 LANGUAGE plpgsql
AS $function$
begin
  insert into availability_changes (venue_id, kind, range_resource_id, from_date, to_date, reason)
    select v.id, 'range', p_resource_id, coalesce(p_from, (now() at time zone v.timezone)::date),
           coalesce(p_to, (now() at time zone v.timezone)::date + v.max_advance_days), p_reason
      from venues v where v.id = p_venue_id;
end
$function$;

CREATE OR REPLACE FUNCTION public.record_booking_event(b bookings, p_type text)
 RETURNS uuid
 LANGUAGE sql
AS $function$
  select record_booking_event(b, p_type, null)
$function$;

CREATE OR REPLACE FUNCTION public.record_booking_event(r bookings, p_type text, p_trace text)
 RETURNS uuid
 LANGUAGE sql
AS $function$
  select record_event(p_type, r.venue_id, r.partner_id, r.hold_id, r.id, r.slot_id, booking_event_details(r), p_trace)
$function$;

CREATE OR REPLACE FUNCTION public.record_booking_events(p_type text, p_booking_ids uuid[], p_trace text)
 RETURNS uuid[]
 LANGUAGE plpgsql
AS $function$
begin
  return record_events(p_type,
    (select jsonb_agg(jsonb_build_object('venue_id', b.venue_id, 'partner_id', b.partner_id, 'hold_id', b.hold_id,
                                         'booking_id', b.id, 'slot_id', b.slot_id,
                                         'details', booking_event_details(b))
                      order by x.n)
       from unnest(p_booking_ids) with ordinality as x(booking_id, n) join bookings b on b.id = x.booking_id),
    p_trace);
end
$function$;

CREATE OR REPLACE FUNCTION public.record_event(p_type text, p_venue_id uuid, p_partner_id uuid, p_hold_id uuid, p_booking_id uuid, p_slot_id uuid, p_details jsonb, p_trace text DEFAULT NULL::text)
 RETURNS uuid
 LANGUAGE plpgsql
AS $function$
declare
  v_id uuid;
  v_published boolean;
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  -- publish_events()'s insert, written here for the event just recorded: calling it cost ~16 µs an
  -- event more (pgbench, one client), twice in every hold → confirm cycle.
  with recorded as (
    insert into events (event_type, venue_id, partner_id, hold_id, booking_id, slot_id, details)
      values (p_type, p_venue_id, p_partner_id, p_hold_id, p_booking_id, p_slot_id, p_details)
      returning id
  ), published as (
    insert into webhook_deliveries (event_id, subscription_id, partner_id, next_attempt_id, next_attempt_at, trace)
    select e.id, s.subscription_id, s.partner_id, gen_random_uuid(), now(), nullif(current_setting('booking.trace', true), '')
      from recorded e
     cross join event_recipients(p_venue_id, p_type) s
    returning 1
  )
  select e.id, exists (select from published) into v_id, v_published from recorded e;
  if v_published then
    perform pg_notify('webhook_attempts_due', '');
  end if;
  return v_id;
end
$function$;

CREATE OR REPLACE FUNCTION public.record_events(p_type text, p_drafts jsonb, p_trace text)
 RETURNS uuid[]
 LANGUAGE plpgsql
AS $function$
declare
  v_ids uuid[];
begin
  if p_trace is not null then
    perform set_config('booking.trace', p_trace, true);
  end if;
  -- Rows are numbered in the order of the select, so seq follows the drafts' order.
  with recorded as (
    insert into events (event_type, venue_id, partner_id, hold_id, booking_id, slot_id, details)
    select p_type, (d ->> 'venue_id')::uuid, (d ->> 'partner_id')::uuid, (d ->> 'hold_id')::uuid,
           (d ->> 'booking_id')::uuid, (d ->> 'slot_id')::uuid, d -> 'details'
      from jsonb_array_elements(p_drafts) with ordinality as x(d, n)
     order by x.n
    returning id, seq
  )
  select array_agg(r.id order by r.seq) into v_ids from recorded r;
  perform publish_events(v_ids);
  return coalesce(v_ids, '{}');
end
$function$;

CREATE OR REPLACE FUNCTION public.record_hold_event(h holds, p_type text)
 RETURNS uuid
 LANGUAGE sql
AS $function$
  select record_hold_event(h, p_type, null)
$function$;

CREATE OR REPLACE FUNCTION public.record_hold_event(r holds, p_type text, p_trace text)
 RETURNS uuid
 LANGUAGE sql
AS $function$
  select record_event(p_type, r.venue_id, r.partner_id, r.id, null, r.slot_id, hold_event_details(r), p_trace)
$function$;

CREATE OR REPLACE FUNCTION public.record_hold_events(p_type text, p_hold_ids uuid[], p_trace text)
 RETURNS uuid[]
 LANGUAGE plpgsql
AS $function$
begin
  return record_events(p_type,
    (select jsonb_agg(jsonb_build_object('venue_id', h.venue_id, 'partner_id', h.partner_id, 'hold_id', h.id,
                                         'slot_id', h.slot_id, 'details', hold_event_details(h))
                      order by x.n)
       from unnest(p_hold_ids) with ordinality as x(hold_id, n) join holds h on h.id = x.hold_id),
    p_trace);
end
$function$;

CREATE OR REPLACE FUNCTION public.record_waitlist_event(w waitlist_entries, p_window_start timestamp with time zone, p_window_end timestamp with time zone, p_price integer, p_trace text DEFAULT NULL::text)
 RETURNS uuid
 LANGUAGE sql
AS $function$
  select record_event('waitlist_promoted', w.venue_id, w.partner_id, null, null, w.slot_id,
    jsonb_build_object('waitlist_entry_id', w.id, 'resource_id', w.resource_id, 'slot_date', w.slot_date,
      'slot_start', iso_utc(p_window_start), 'slot_end', iso_utc(p_window_end), 'price_rupees', p_price,
      'status', w.status, 'promoted_at', iso_utc(w.promoted_at), 'expires_at', iso_utc(w.expires_at)),
    p_trace)
$function$;

CREATE OR REPLACE FUNCTION public.record_windows_changed(p_hold_ids uuid[])
 RETURNS void
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
begin
  perform record_availability_change(h.venue_id, array_agg(h.resource_id order by h.id),
                                     array_agg(tstzrange(h.slot_start, h.slot_end) order by h.id))
     from (select distinct id from unnest(p_hold_ids) id) u
    cross join lateral (select * from holds h where h.id = u.id limit 1) h
    group by h.venue_id;
end
$function$;

CREATE OR REPLACE FUNCTION public.release_reservations(p_hold_ids uuid[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
declare
  v_id bigint;
begin
  for v_id in
    select r.id from reservations r where r.hold_id = any (p_hold_ids) and r.active order by r.unit_id, lower(r.during)
  loop
    update reservations set active = false where id = v_id;
  end loop;
  perform record_windows_changed(p_hold_ids);
end
$function$;

CREATE OR REPLACE FUNCTION public.reservation_is_live(r reservations)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
  select r.active and (r.expires_at is null or r.expires_at > now())
$function$;

CREATE OR REPLACE FUNCTION public.reservation_is_overdue(r reservations)
 RETURNS boolean
 LANGUAGE sql
 STABLE
AS $function$
  select r.active and not reservation_is_live(r)
$function$;

CREATE OR REPLACE FUNCTION public.reservation_window_locks(p_units uuid[], p_during tstzrange)
 RETURNS SETOF bigint
 LANGUAGE sql
 STABLE
AS $function$
  select distinct hashtextextended('reservation-window:' || u || ':' || h, 0)
    from unnest(p_units) u,
         generate_series(floor(extract(epoch from lower(p_during)) / 3600)::bigint,
                         ceil(extract(epoch from upper(p_during)) / 3600)::bigint - 1) h
$function$;

CREATE OR REPLACE FUNCTION public.reservations_clear_booked_time()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  truncate booked_time;
  return null;
end
$function$;

CREATE OR REPLACE FUNCTION public.reservations_keep_booked_time()
 RETURNS trigger
 LANGUAGE plpgsql
AS $function$
begin
  if tg_op in ('UPDATE', 'DELETE') and old.active and old.expires_at is null then
    perform booked_time_change(old.unit_id, old.during, false);
  end if;
  if tg_op in ('INSERT', 'UPDATE') and new.active and new.expires_at is null then
    perform booked_time_change(new.unit_id, new.during, true);
  end if;
  return null;
end
$function$;

CREATE OR REPLACE FUNCTION public.resource_units(p_resource_id uuid)
 RETURNS uuid[]
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
begin
  return coalesce(
    (select array_agg(part_id order by part_id) from resource_parts where resource_id = p_resource_id),
    array[p_resource_id]);
end
$function$;

CREATE OR REPLACE FUNCTION public.send_job_hold_expire(p_data jsonb, p_start_after timestamp with time zone DEFAULT NULL::timestamp with time zone, p_expire_seconds integer DEFAULT NULL::integer)
 RETURNS SETOF uuid
 LANGUAGE plpgsql
AS $function$
    begin
      return query 
    INSERT INTO pgboss.job_common (
      id,
      name,
      data,
      priority,
      start_after,
      created_on,
      singleton_key,
      singleton_on,
      group_id,
      group_tier,
      expire_seconds,
      deletion_seconds,
      keep_until,
      retry_limit,
      retry_delay,
      retry_backoff,
      retry_delay_max,
      policy,
      dead_letter,
      heartbeat_seconds,
      blocked,
      blocking,
      pending_dependencies
    )
    SELECT
      COALESCE(id, gen_random_uuid()) as id,
      'hold.expire' as name,
      data,
      COALESCE(priority, 0) as priority,
      j.start_after,
      pgboss.job_now() as created_on,
      "singletonKey",
      CASE
        
        WHEN "singletonSeconds" IS NOT NULL THEN 'epoch'::timestamp + '1s'::interval * ("singletonSeconds"::float8 * floor(( date_part('epoch', pgboss.job_now()) + COALESCE("singletonOffset",0)::float8) / "singletonSeconds"::float8 ))
        ELSE NULL
        END as singleton_on,
      "groupId" as group_id,
      "groupTier" as group_tier,
      COALESCE("expireInSeconds", q.expire_seconds) as expire_seconds,
      COALESCE("deleteAfterSeconds", q.deletion_seconds) as deletion_seconds,
      j.start_after + (COALESCE("retentionSeconds", q.retention_seconds) * interval '1s') as keep_until,
      COALESCE("retryLimit", q.retry_limit) as retry_limit,
      COALESCE("retryDelay", q.retry_delay) as retry_delay,
      COALESCE("retryBackoff", q.retry_backoff, false) as retry_backoff,
      COALESCE("retryDelayMax", q.retry_delay_max) as retry_delay_max,
      q.policy,
      COALESCE("deadLetter", q.dead_letter) as dead_letter,
      COALESCE("heartbeatSeconds", q.heartbeat_seconds) as heartbeat_seconds,
      COALESCE(blocked, false) as blocked,
      COALESCE(blocking, false) as blocking,
      COALESCE("pendingDependencies", 0) as pending_dependencies
    FROM (
      SELECT *,
        CASE
          WHEN (right("startAfter", 1) = 'Z' OR "startAfter" ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}') THEN CAST("startAfter" as timestamp with time zone)
          ELSE pgboss.job_now() + CAST(COALESCE("startAfter",'0') as interval)
          END as start_after
      FROM json_to_recordset(json_build_array(json_build_object(
      'data', p_data, 'startAfter', to_json(p_start_after) #>> '{}', 'singletonOffset', 0,
      'expireInSeconds', coalesce(p_expire_seconds, 15)))::text::json) as x (
        id uuid,
        priority integer,
        data jsonb,
        "startAfter" text,
        "retryLimit" integer,
        "retryDelay" integer,
        "retryDelayMax" integer,
        "retryBackoff" boolean,
        "singletonKey" text,
        "singletonSeconds" integer,
        "singletonOffset" integer,
        
        "groupId" text,
        "groupTier" text,
        "expireInSeconds" integer,
        "deleteAfterSeconds" integer,
        "retentionSeconds" integer,
        "deadLetter" text,
        "heartbeatSeconds" integer,
        blocked boolean,
        blocking boolean,
        "pendingDependencies" integer
      )
    ) j
    JOIN pgboss.queue q ON q.name = 'hold.expire'
    ON CONFLICT DO NOTHING
    RETURNING id
  ;
    end
    $function$;

CREATE OR REPLACE FUNCTION public.send_job_hold_group_expire(p_data jsonb, p_start_after timestamp with time zone DEFAULT NULL::timestamp with time zone, p_expire_seconds integer DEFAULT NULL::integer)
 RETURNS SETOF uuid
 LANGUAGE plpgsql
AS $function$
    begin
      return query 
    INSERT INTO pgboss.job_common (
      id,
      name,
      data,
      priority,
      start_after,
      created_on,
      singleton_key,
      singleton_on,
      group_id,
      group_tier,
      expire_seconds,
      deletion_seconds,
      keep_until,
      retry_limit,
      retry_delay,
      retry_backoff,
      retry_delay_max,
      policy,
      dead_letter,
      heartbeat_seconds,
      blocked,
      blocking,
      pending_dependencies
    )
    SELECT
      COALESCE(id, gen_random_uuid()) as id,
      'hold_group.expire' as name,
      data,
      COALESCE(priority, 0) as priority,
      j.start_after,
      pgboss.job_now() as created_on,
      "singletonKey",
      CASE
        
        WHEN "singletonSeconds" IS NOT NULL THEN 'epoch'::timestamp + '1s'::interval * ("singletonSeconds"::float8 * floor(( date_part('epoch', pgboss.job_now()) + COALESCE("singletonOffset",0)::float8) / "singletonSeconds"::float8 ))
        ELSE NULL
        END as singleton_on,
      "groupId" as group_id,
      "groupTier" as group_tier,
      COALESCE("expireInSeconds", q.expire_seconds) as expire_seconds,
      COALESCE("deleteAfterSeconds", q.deletion_seconds) as deletion_seconds,
      j.start_after + (COALESCE("retentionSeconds", q.retention_seconds) * interval '1s') as keep_until,
      COALESCE("retryLimit", q.retry_limit) as retry_limit,
      COALESCE("retryDelay", q.retry_delay) as retry_delay,
      COALESCE("retryBackoff", q.retry_backoff, false) as retry_backoff,
      COALESCE("retryDelayMax", q.retry_delay_max) as retry_delay_max,
      q.policy,
      COALESCE("deadLetter", q.dead_letter) as dead_letter,
      COALESCE("heartbeatSeconds", q.heartbeat_seconds) as heartbeat_seconds,
      COALESCE(blocked, false) as blocked,
      COALESCE(blocking, false) as blocking,
      COALESCE("pendingDependencies", 0) as pending_dependencies
    FROM (
      SELECT *,
        CASE
          WHEN (right("startAfter", 1) = 'Z' OR "startAfter" ~ '^[0-9]{4}-[0-9]{2}-[0-9]{2}') THEN CAST("startAfter" as timestamp with time zone)
          ELSE pgboss.job_now() + CAST(COALESCE("startAfter",'0') as interval)
          END as start_after
      FROM json_to_recordset(json_build_array(json_build_object(
      'data', p_data, 'startAfter', to_json(p_start_after) #>> '{}', 'singletonOffset', 0,
      'expireInSeconds', coalesce(p_expire_seconds, 15)))::text::json) as x (
        id uuid,
        priority integer,
        data jsonb,
        "startAfter" text,
        "retryLimit" integer,
        "retryDelay" integer,
        "retryDelayMax" integer,
        "retryBackoff" boolean,
        "singletonKey" text,
        "singletonSeconds" integer,
        "singletonOffset" integer,
        
        "groupId" text,
        "groupTier" text,
        "expireInSeconds" integer,
        "deleteAfterSeconds" integer,
        "retentionSeconds" integer,
        "deadLetter" text,
        "heartbeatSeconds" integer,
        blocked boolean,
        blocking boolean,
        "pendingDependencies" integer
      )
    ) j
    JOIN pgboss.queue q ON q.name = 'hold_group.expire'
    ON CONFLICT DO NOTHING
    RETURNING id
  ;
    end
    $function$;

CREATE OR REPLACE FUNCTION public.sequence_availability_changes()
 RETURNS bigint
 LANGUAGE plpgsql
AS $function$
declare
  v_from xid8;
  v_next xid8;
  v_last bigint;
  v_reached bigint;
begin
  perform pg_advisory_xact_lock(hashtextextended('availability-change-sequencer', 0));
  select s.watermark, s.last_position into v_from, v_last from availability_change_sequencer s;
  -- Every transaction below v_next has ended before the update below takes its snapshot: what it
  -- recorded is committed and seen there (or aborted and gone).
  v_next := pg_snapshot_xmin(pg_current_snapshot());
  with positioned as (
    update availability_changes set position = nextval('availability_change_position')
     where position is null and recorded_xid >= v_from
    returning position
  )
  select max(p.position) into v_reached from positioned p;
  if v_next > v_from or v_reached is not null then
    v_last := greatest(v_last, v_reached);
    update availability_change_sequencer set watermark = greatest(watermark, v_next), last_position = v_last;
  end if;
  return v_last;
end
$function$;

CREATE OR REPLACE FUNCTION public.series_json(p_series_id uuid)
 RETURNS jsonb
 LANGUAGE plpgsql
 STABLE
AS $function$
begin
  return (
    select jsonb_build_object(
      'read_at', now(),
      'series', to_jsonb(s),
      'group', (select to_jsonb(g) from hold_groups g where g.id = s.hold_group_id),
      'occurrences', (select jsonb_agg(jsonb_build_object('occurrence', to_jsonb(o), 'hold', to_jsonb(h),
                                                         'booking', to_jsonb(b)) order by o.occurrence_index)
                        from series_occurrences o
                        left join holds h on h.id = o.hold_id
                        left join bookings b on b.hold_id = o.hold_id
                       where o.series_id = s.id))
      from series s where s.id = p_series_id
  );
end
$function$;

CREATE OR REPLACE FUNCTION public.series_windows(p_venue venues, p_resource resources, p_first_date date, p_start_time time without time zone, p_minutes integer, p_count integer, p_interval_weeks integer)
 RETURNS TABLE(occurrence_index integer, local_date date, slot_start timestamp with time zone, slot_end timestamp with time zone, utc_offset text)
 LANGUAGE sql
 STABLE
AS $function$
  select k, d.local_date, w.start, w.start + make_interval(mins => p_minutes),
         case when w.start is not null then utc_offset(w.start, p_venue.timezone) end
    from generate_series(0, p_count - 1) k
    cross join lateral (select p_first_date + 7 * p_interval_weeks * k as local_date) d
    left join lateral (
      select g as start
        from generate_series((d.local_date + p_resource.opens_at) at time zone p_venue.timezone,
                             (d.local_date + p_resource.closes_at) at time zone p_venue.timezone
                               - make_interval(mins => p_resource.duration_minutes),
                             make_interval(mins => p_resource.duration_minutes)) g
       where (g at time zone p_venue.timezone)::time = p_start_time
         and (g at time zone p_venue.timezone)::date = d.local_date
       order by g
       limit 1
    ) w on true
   order by k
$function$;

CREATE OR REPLACE FUNCTION public.slot_id(p_resource_id uuid, p_start timestamp with time zone)
 RETURNS uuid
 LANGUAGE sql
 STABLE
AS $function$
  select overlay(overlay(
    md5('booking-slot:' || p_resource_id || '/' || (extract(epoch from p_start) * 1000)::bigint)
    placing '5' from 13 for 1) placing '8' from 17 for 1)::uuid
$function$;

CREATE OR REPLACE FUNCTION public.store_idempotency_key(p_partner_id uuid, p_key text, p_operation text, p_fingerprint text, p_result jsonb)
 RETURNS void
 LANGUAGE sql
AS $function$
  insert into idempotency_keys (partner_id, key, operation, fingerprint, result)
    values (p_partner_id, p_key, p_operation, p_fingerprint, p_result)
$function$;

CREATE OR REPLACE FUNCTION public.take_advisory_locks(p_keys bigint[])
 RETURNS void
 LANGUAGE plpgsql
AS $function$
declare
  v_key bigint;
begin
  for v_key in select distinct k from unnest(p_keys) k order by 1 loop
    perform pg_advisory_xact_lock(v_key);
  end loop;
end
$function$;

CREATE OR REPLACE FUNCTION public.take_rate_limit_tokens(p_api_key_id uuid, p_limit integer, p_count integer)
 RETURNS TABLE(allowed boolean, remaining integer, reset_ms bigint, retry_ms bigint)
 LANGUAGE plpgsql
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  v_head bigint;
  v_next bigint;
  v_now timestamptz;
  v_admitted integer;
  v_oldest timestamptz;
  v_reset_ms bigint;
  v_room timestamptz;
  v_retry_ms bigint;
begin
  select w.head_seq, w.next_seq into v_head, v_next from rate_limit_windows w
    where w.api_key_id = p_api_key_id for update;
  if not found then
    insert into rate_limit_windows (api_key_id) values (p_api_key_id) on conflict do nothing;
    select w.head_seq, w.next_seq into v_head, v_next from rate_limit_windows w
      where w.api_key_id = p_api_key_id for update;
  end if;
  -- Read the clock only once the lock is held, so hit times follow the order of admission.
  v_now := clock_timestamp();
  while v_head < v_next loop
    delete from rate_limit_hits h
      where h.api_key_id = p_api_key_id and h.seq = v_head and h.hit_at <= v_now - interval '60 seconds';
    exit when not found;
    v_head := v_head + 1;
  end loop;
  v_admitted := least(p_count, greatest(p_limit - (v_next - v_head), 0));
  if v_admitted > 0 then
    insert into rate_limit_hits (api_key_id, seq, hit_at)
      select p_api_key_id, s, v_now from generate_series(v_next, v_next + v_admitted - 1) s;
  end if;
  update rate_limit_windows w set head_seq = v_head, next_seq = v_next + v_admitted
    where w.api_key_id = p_api_key_id;
  -- Until the oldest hit of the window leaves it; the same for the whole batch.
  select h.hit_at into v_oldest from rate_limit_hits h
    where h.api_key_id = p_api_key_id and h.seq = v_head;
  v_reset_ms := coalesce(ceil(extract(epoch from (v_oldest + interval '60 seconds' - v_now)) * 1000), 0);
  v_retry_ms := v_reset_ms;
  -- A request fits once the window holds fewer hits than the limit: when the hit `p_limit` places
  -- before the next one leaves. Read only when a request was refused.
  if v_admitted < p_count and p_limit > 0 then
    select h.hit_at into v_room from rate_limit_hits h
      where h.api_key_id = p_api_key_id and h.seq = v_next + v_admitted - p_limit;
    v_retry_ms := greatest(v_reset_ms,
                           coalesce(ceil(extract(epoch from (v_room + interval '60 seconds' - v_now)) * 1000), 0));
  end if;
  -- The i-th request counts itself and the admitted ones before it; a refused one sees the window
  -- full.
  return query
    select i <= v_admitted,
           greatest(p_limit - (v_next - v_head + least(i, v_admitted)), 0)::integer,
           v_reset_ms,
           v_retry_ms
      from generate_series(1, p_count) i
     order by i;
end
$function$;

CREATE OR REPLACE FUNCTION public.utc_offset(p_at timestamp with time zone, p_zone text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
  select case when m < 0 then '-' else '+' end || lpad((abs(m) / 60)::text, 2, '0') || ':'
         || lpad((abs(m) % 60)::text, 2, '0')
    from (select (extract(epoch from (p_at at time zone p_zone) - (p_at at time zone 'UTC')) / 60)::integer as m) o
$function$;

CREATE OR REPLACE FUNCTION public.venue_authorized(p_partner_id uuid, p_venue_id uuid)
 RETURNS boolean
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
begin
  return exists (select 1 from authorized_venues(p_partner_id) v where v.id = p_venue_id);
end
$function$;

CREATE OR REPLACE FUNCTION public.venue_availability(p_partner_id uuid, p_venue_id uuid, p_date date, p_one_resource boolean, p_resource_id uuid)
 RETURNS TABLE(resource_id uuid, starts_ms text, ends_ms text, prices text, available text)
 LANGUAGE plpgsql
 STABLE
AS $function$
#variable_conflict use_column
begin
  perform check_availability_access(p_partner_id, p_venue_id, p_one_resource, p_resource_id);
  return query
  -- date_part, not extract: a float8 holds these instants exactly (whole milliseconds, years near
  -- now), and extract's numeric result was slower to make.
  select s.resource_id,
         string_agg((date_part('epoch', s.slot_start) * 1000)::bigint::text, ','),
         string_agg((date_part('epoch', s.slot_end) * 1000)::bigint::text, ','),
         string_agg(s.price_rupees::text, ','),
         string_agg(case when s.bookable and not s.taken then 't' else 'f' end, ',')
  from venue_slots(p_venue_id, p_date, p_resource_id) s
  group by s.resource_id
  order by s.resource_id;
end
$function$;

CREATE OR REPLACE FUNCTION public.venue_slots(p_venue_id uuid, p_date date, p_resource_id uuid DEFAULT NULL::uuid, p_from timestamp with time zone DEFAULT NULL::timestamp with time zone, p_to timestamp with time zone DEFAULT NULL::timestamp with time zone)
 RETURNS TABLE(resource_id uuid, slot_start timestamp with time zone, slot_end timestamp with time zone, price_rupees integer, bookable boolean, taken boolean)
 LANGUAGE sql
 STABLE
AS $function$
with r as materialized (
  -- The resources, each with its units (resource_units(), written out: it is not inlined) and
  -- the instants it opens and closes on that local date.
  select r.id, r.price_rupees, v.status, v.min_lead_minutes, v.timezone,
         make_interval(mins => r.duration_minutes) as step,
         (p_date + r.opens_at) at time zone v.timezone as opens,
         (p_date + r.closes_at) at time zone v.timezone as closes,
         coalesce((select array_agg(p.part_id order by p.part_id) from resource_parts p
                   where p.resource_id = r.id),
                  array[r.id]) as units
  from venues v join resources r on r.venue_id = v.id
  where v.id = p_venue_id and (p_resource_id is null or r.id = p_resource_id)
    and not extract(isodow from p_date)::smallint = any (r.closed_on)
    and p_date between (now() at time zone v.timezone)::date
                   and (now() at time zone v.timezone)::date + v.max_advance_days
), span as (
  -- What the slots can overlap: the hours the resources are open (narrowed to the window
  -- asked for), on their units. No row when no resource is open, so nothing is read.
  select tstzrange(greatest(min(opens), p_from), least(max(closes), p_to)) as during,
         array(select distinct u from r, unnest(r.units) u) as units
  from r having count(*) > 0
     and greatest(min(opens), p_from) <= least(max(closes), p_to)
), live as materialized (
  -- What is taken on the units, in pieces: booked time per unit and UTC day from booked_time
  -- (kept by the triggers on reservations, one row however many bookings), then the holds
  -- still running, read one by one (whether a hold still runs depends on now()), found from
  -- the venue's ACTIVE holds and never from reservations by unit and time (see the migration
  -- 20261127000000). Together these are exactly the live reservations (reservation_is_live()).
  select b.unit_id, b.booked as taken from booked_time b, span
  where b.unit_id = any (span.units)
    and b.utc_day between (lower(span.during) at time zone 'UTC')::date
                      and (upper(span.during) at time zone 'UTC')::date
  union all
  select rv.unit_id, multirange(rv.during) from holds h, span, reservations rv
  where h.venue_id = p_venue_id and h.status = 'ACTIVE' and h.hold_expiry_at > now()
    and tstzrange(h.slot_start, h.slot_end) && span.during
    and rv.hold_id = h.id and rv.active and rv.expires_at > now()
), dark as materialized (
  select b.unit_ids, b.during from blackouts b, span
  where b.venue_id = p_venue_id and b.during && span.during
), rules as materialized (
  select pr.* from price_rules pr
  where pr.resource_id in (select id from r)
    and (pr.on_date is null or pr.on_date = p_date)
    and (pr.days is null or extract(isodow from p_date)::smallint = any (pr.days))
), taken as materialized (
  -- What is taken per resource: its units' live pieces, found by unit in one join.
  select ru.id, range_agg(l.taken) as taken
  from (select r.id, unnest(r.units) as unit_id from r) ru
  join live l on l.unit_id = ru.unit_id
  group by ru.id
), rt as materialized (
  -- Per resource, once: the union of what blocks it. A slot then costs one && each.
  select r.*,
    (select t.taken from taken t where t.id = r.id) as taken,
    (select range_agg(b.during) from dark b where b.unit_ids is null or b.unit_ids && r.units) as dark
  from r
), s as (
  -- Steps in absolute time from the instant the resource opens on that local date, each slot
  -- exactly duration_minutes long, while it ends by the instant it closes. On a day the clocks
  -- change that gives an hour more or less of slots, never a zero-length or doubled one. (A
  -- local time that does not exist or repeats is read as standard time, as AT TIME ZONE does.)
  select rt.id, rt.price_rupees as base_price, rt.status, rt.min_lead_minutes, rt.taken, rt.dark,
         (g.slot_start at time zone rt.timezone)::time as local_start,
         tstzrange(g.slot_start, g.slot_start + rt.step) as during
  from rt cross join lateral generate_series(rt.opens, rt.closes - rt.step, rt.step) as g(slot_start)
  where (p_from is null or g.slot_start >= p_from) and (p_to is null or g.slot_start + rt.step <= p_to)
)
-- The uncorrelated test in front ("(select not exists …)") runs once per call, so a venue
-- without price rules skips the per-slot lookup.
select s.id, lower(s.during), upper(s.during),
  case when (select not exists (select 1 from rules)) then s.base_price else coalesce((
    select pr.price_rupees from rules pr
    where pr.resource_id = s.id
      and (pr.from_time is null or (s.local_start >= pr.from_time and s.local_start < pr.to_time))
    order by pr.specificity desc, pr.created_at desc, pr.id desc
    limit 1), s.base_price) end,
  s.status = 'active'
    and lower(s.during) > now() + make_interval(mins => s.min_lead_minutes)
    and not coalesce(s.dark && s.during, false),
  coalesce(s.taken && s.during, false)
from s
$function$;

CREATE OR REPLACE FUNCTION public.window_claims(p_resource_id uuid, p_units uuid[], p_during tstzrange, OUT conflict text, OUT overdue uuid[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
begin
  select case when bool_or(r.resource_id = p_resource_id and reservation_is_live(r)) then 'TAKEN'
              when bool_or(reservation_is_live(r)) then 'TRANSFORMATION_CONFLICT' end,
         array_agg(distinct r.hold_id) filter (where reservation_is_overdue(r))
    into conflict, overdue
    from reservations r
   where r.active and r.unit_id = any (p_units) and r.during && p_during;
end
$function$;

CREATE OR REPLACE FUNCTION public.window_price(p_venue venues, p_resource resources, p_start timestamp with time zone, p_minutes integer, p_discount integer)
 RETURNS integer
 LANGUAGE plpgsql
 STABLE
AS $function$
begin
  return (
    with slot as (
      select s as slot_start, (s at time zone p_venue.timezone) as local_start
        from generate_series(p_start, p_start + make_interval(mins => p_minutes - p_resource.duration_minutes),
                             make_interval(mins => p_resource.duration_minutes)) s
    )
    select round((sum(coalesce((
             select pr.price_rupees from price_rules pr
              where pr.resource_id = p_resource.id
                and (pr.on_date is null or pr.on_date = s.local_start::date)
                and (pr.days is null or extract(isodow from s.local_start::date)::smallint = any (pr.days))
                and (pr.from_time is null
                     or (s.local_start::time >= pr.from_time and s.local_start::time < pr.to_time))
              order by pr.specificity desc, pr.created_at desc, pr.id desc
              limit 1), p_resource.price_rupees)) * (100 - p_discount))::numeric / 100)::integer
      from slot s
  );
end
$function$;

CREATE OR REPLACE FUNCTION public.window_rule_refusal(p_venue venues, p_resource resources, p_start timestamp with time zone, p_minutes integer, p_advance_days integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
declare
  v_date date := (p_start at time zone p_venue.timezone)::date;
  v_opens timestamptz := (v_date + p_resource.opens_at) at time zone p_venue.timezone;
  v_closes timestamptz := (v_date + p_resource.closes_at) at time zone p_venue.timezone;
  v_step numeric := p_resource.duration_minutes * 60;
  v_from_open numeric := extract(epoch from p_start) - extract(epoch from v_opens);
  v_grid_end numeric := floor((extract(epoch from v_closes) - extract(epoch from v_opens)) / v_step) * v_step;
  v_end timestamptz := p_start + make_interval(mins => p_minutes);
begin
  if v_from_open < 0 or mod(v_from_open, v_step) <> 0 or p_minutes % p_resource.duration_minutes <> 0
     or v_from_open + p_minutes * 60 > v_grid_end then
    return 'NOT_ON_GRID';
  end if;
  if p_start <= now() then
    return 'IN_PAST';
  end if;
  if v_date > (now() at time zone p_venue.timezone)::date + p_advance_days then
    return 'BEYOND_BOOKING_WINDOW';
  end if;
  if p_venue.status <> 'active' or extract(isodow from v_date)::smallint = any (p_resource.closed_on) then
    return 'CLOSED';
  end if;
  if p_start < now() + make_interval(mins => p_venue.min_lead_minutes) then
    return 'LEAD_TIME';
  end if;
  if exists (select from blackouts b
              where b.venue_id = p_venue.id and b.during && tstzrange(p_start, v_end)
                and (b.unit_ids is null or b.unit_ids && resource_units(p_resource.id))) then
    return 'BLACKOUT';
  end if;
  return null;
end
$function$;
