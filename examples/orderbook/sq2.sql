-- SQ2 (RPAI §5.2.1), a synthetic variant of VWAP the paper describes but does not print: it
-- "changes the right-side inner predicate of VWAP to contain asymmetric computations in the two
-- sides of the inequality". Our choice: 100 * b2.price <= 100 * b.price + b.volume, i.e. the inner
-- bids priced at most one tick per 100 shares of the outer bid above its price (a larger bid
-- reaches further up the book). The inner side reads price only, the outer side price and volume;
-- integer operands keep the comparison exact.
select sum(b.price * b.volume) as sq2
from bids b
where 0.75 * (select sum(b1.volume) from bids b1)
    < (select sum(b2.volume) from bids b2 where 100 * b2.price <= 100 * b.price + b.volume)
