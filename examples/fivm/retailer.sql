-- A Retailer-like schema (F-IVM's Retailer dataset is proprietary; Olteanu PODS'24 Ex. 4.10 names
-- its five relations). Synthetic data with the same keys and dependencies comes from
-- planner/workloads/retailer.py. All values are integers (units, cents, degrees) so that sums and
-- regression payloads stay exact.
--
-- The dependency the reduct uses is locn -> zip: a store lies in one zip code. Location's primary
-- key implies it already; it is declared anyway ('ivm.fd.locn' = 'zip') because it is the fact
-- that turns the join with Census into a q-hierarchical reduct (Def. 4.9): every relation with
-- locn gains zip, so atoms(locn) ⊆ atoms(zip). (The survey's text states the FD as zip -> locn; with
-- that one Census gains locn instead. Both make the reduct hierarchical; ours holds in the data.)
create table inventory (
  locn int not null,
  dateid int not null,
  ksn int not null,
  inventoryunits int not null,
  primary key (locn, dateid, ksn),
  foreign key (locn) references location (locn),
  foreign key (ksn) references item (ksn),
  foreign key (locn, dateid) references weather (locn, dateid)
);

create table location (
  locn int not null,
  zip int not null,
  rgn_cd int not null,
  tot_area_sq_ft int not null,
  primary key (locn),
  foreign key (zip) references census (zip)
) tblproperties ('ivm.fd.locn' = 'zip');

create table census (
  zip int not null,
  population int not null,
  medianage int not null,
  households int not null,
  primary key (zip)
);

create table item (
  ksn int not null,
  price int not null,
  subcategory int not null,
  category int not null,
  primary key (ksn)
);

create table weather (
  locn int not null,
  dateid int not null,
  temp int not null,
  rain int not null,
  primary key (locn, dateid)
);
