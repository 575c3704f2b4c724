-- A Housing-like star on postcode (F-IVM's Housing benchmark: six relations joined on postcode).
-- Houses, shops, institutions and restaurants are many per postcode (each has its own id);
-- demographics and transport are one row per postcode. Every join is on postcode only, so the join
-- is q-hierarchical (one variable shared by all atoms). Synthetic data: planner/workloads/housing.py.
create table house (
  house_id int not null,
  postcode int not null,
  livingarea int not null,
  price int not null,
  nbbedrooms int not null,
  primary key (house_id)
);

create table shop (
  shop_id int not null,
  postcode int not null,
  openinghours int not null,
  pricerange int not null,
  primary key (shop_id)
);

create table institution (
  institution_id int not null,
  postcode int not null,
  typeeducation int not null,
  sizeinstitution int not null,
  primary key (institution_id)
);

create table restaurant (
  restaurant_id int not null,
  postcode int not null,
  openinghours int not null,
  pricerange int not null,
  primary key (restaurant_id)
);

create table demographics (
  postcode int not null,
  averagesalary int not null,
  crimesperyear int not null,
  unemployment int not null,
  primary key (postcode)
);

create table transport (
  postcode int not null,
  nbbuslines int not null,
  nbtrainstations int not null,
  distancecitycentre int not null,
  primary key (postcode)
);
