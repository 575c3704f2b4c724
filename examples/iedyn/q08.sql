-- IEDyn Table 1, Q8: π_{a,d,e,f,g,h,k}(Q5). Free-connex acyclic (IEDyn §6).
-- π keeps multiplicities (GMR semantics, IEDyn §2): a row appears as often as the join rows it
-- projects, so this is a plain SELECT of the columns, not SELECT DISTINCT.
select r.a, s.d, s.e, s.f, t.g, t.h, s.k
from r, s, t
where r.k = s.k and r.a < s.d and s.d < t.g
