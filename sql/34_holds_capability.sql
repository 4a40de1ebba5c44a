-- 34_holds_capability: pgjq.holds_capability answers each role about itself, as the API functions would
-- decide: a grant for one queue, a grant for every queue, a role's membership, the extension's owner, no
-- grant at all; an unknown capability is refused (22023).
\set VERBOSITY default
SELECT pgjq.create_queue('caps_a');
SELECT pgjq.create_queue('caps_b');
CREATE ROLE regress_caps_admin_a;
CREATE ROLE regress_caps_observer;
CREATE ROLE regress_caps_member IN ROLE regress_caps_admin_a;
CREATE ROLE regress_caps_nobody;
SELECT pgjq.grant_admin('regress_caps_admin_a', 'caps_a');
SELECT pgjq.grant_observer('regress_caps_observer');
CREATE FUNCTION caps_here() RETURNS TABLE (queue_name text, producer boolean, worker boolean, admin boolean,
                                           observer boolean) LANGUAGE sql AS
  $$ SELECT q, pgjq.holds_capability('producer', q), pgjq.holds_capability('worker', q),
            pgjq.holds_capability('admin', q), pgjq.holds_capability('observer', q)
       FROM unnest(ARRAY['caps_a', 'caps_b']) q $$;
SELECT * FROM caps_here();  -- the extension's owner holds every capability
SET ROLE regress_caps_admin_a;
SELECT * FROM caps_here();
RESET ROLE;
SET ROLE regress_caps_member;  -- inherits its role's grant
SELECT * FROM caps_here();
RESET ROLE;
SET ROLE regress_caps_observer;
SELECT * FROM caps_here();
RESET ROLE;
SET ROLE regress_caps_nobody;
SELECT * FROM caps_here();
SELECT pgjq.holds_capability('superuser', 'caps_a');
SELECT pgjq.holds_capability(NULL, 'caps_a') IS NULL AS strict;
RESET ROLE;
SELECT pgjq.revoke_admin('regress_caps_admin_a');
SET ROLE regress_caps_member;  -- the grant's removal is seen at once
SELECT pgjq.holds_capability('admin', 'caps_a') AS admin_after_revoke;
RESET ROLE;
DROP FUNCTION caps_here();
SELECT pgjq.drop_queue('caps_a');
SELECT pgjq.drop_queue('caps_b');
DROP ROLE regress_caps_member, regress_caps_admin_a, regress_caps_observer, regress_caps_nobody;
