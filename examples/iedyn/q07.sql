-- IEDyn Table 1, Q7: π_{a,b,d,e,f,g,h}(Q4). Free-connex acyclic (IEDyn §6).
-- π keeps multiplicities (GMR semantics, IEDyn §2): a row appears as often as the join rows it
-- projects, so this is a plain SELECT of the columns, not SELECT DISTINCT.
select r.a, r.b, s.d, s.e, s.f, t.g, t.h
from r, s, t
where r.a < s.d and s.d < t.g
