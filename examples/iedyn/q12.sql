-- IEDyn Table 1, Q12: π_{b,c,e,f,h,i}(Q6). Acyclic, not free-connex (IEDyn §6).
-- π keeps multiplicities (GMR semantics, IEDyn §2): a row appears as often as the join rows it
-- projects, so this is a plain SELECT of the columns, not SELECT DISTINCT.
select r.b, r.c, s.e, s.f, t.h, t.i
from r, s, t
where s.k = t.k and r.a < s.d and s.d < t.g
