-- The TPC-H schema with every primary and foreign key (TPC-H spec §1.4).
CREATE TABLE region (r_regionkey INT NOT NULL, r_name CHAR(25), r_comment VARCHAR(152),
  PRIMARY KEY (r_regionkey));
CREATE TABLE nation (n_nationkey INT NOT NULL, n_name CHAR(25), n_regionkey INT, n_comment VARCHAR(152),
  PRIMARY KEY (n_nationkey), FOREIGN KEY (n_regionkey) REFERENCES region (r_regionkey));
CREATE TABLE part (p_partkey INT NOT NULL, p_name VARCHAR(55), p_mfgr CHAR(25), p_brand CHAR(10),
  p_type VARCHAR(25), p_size INT, p_container CHAR(10), p_retailprice DECIMAL(15,2), p_comment VARCHAR(23),
  PRIMARY KEY (p_partkey));
CREATE TABLE supplier (s_suppkey INT NOT NULL, s_name CHAR(25), s_address VARCHAR(40), s_nationkey INT,
  s_phone CHAR(15), s_acctbal DECIMAL(15,2), s_comment VARCHAR(101),
  PRIMARY KEY (s_suppkey), FOREIGN KEY (s_nationkey) REFERENCES nation (n_nationkey));
CREATE TABLE partsupp (ps_partkey INT NOT NULL, ps_suppkey INT NOT NULL, ps_availqty INT,
  ps_supplycost DECIMAL(15,2), ps_comment VARCHAR(199),
  PRIMARY KEY (ps_partkey, ps_suppkey),
  FOREIGN KEY (ps_partkey) REFERENCES part (p_partkey),
  FOREIGN KEY (ps_suppkey) REFERENCES supplier (s_suppkey));
CREATE TABLE customer (c_custkey INT NOT NULL, c_name VARCHAR(25), c_address VARCHAR(40), c_nationkey INT,
  c_phone CHAR(15), c_acctbal DECIMAL(15,2), c_mktsegment CHAR(10), c_comment VARCHAR(117),
  PRIMARY KEY (c_custkey), FOREIGN KEY (c_nationkey) REFERENCES nation (n_nationkey));
CREATE TABLE orders (o_orderkey BIGINT NOT NULL, o_custkey INT, o_orderstatus CHAR(1),
  o_totalprice DECIMAL(15,2), o_orderdate DATE, o_orderpriority CHAR(15), o_clerk CHAR(15),
  o_shippriority INT, o_comment VARCHAR(79),
  PRIMARY KEY (o_orderkey), FOREIGN KEY (o_custkey) REFERENCES customer (c_custkey));
CREATE TABLE lineitem (l_orderkey BIGINT NOT NULL, l_partkey INT, l_suppkey INT, l_linenumber INT NOT NULL,
  l_quantity DECIMAL(15,2), l_extendedprice DECIMAL(15,2), l_discount DECIMAL(15,2), l_tax DECIMAL(15,2),
  l_returnflag CHAR(1), l_linestatus CHAR(1), l_shipdate DATE, l_commitdate DATE, l_receiptdate DATE,
  l_shipinstruct CHAR(25), l_shipmode CHAR(10), l_comment VARCHAR(44),
  PRIMARY KEY (l_orderkey, l_linenumber),
  FOREIGN KEY (l_orderkey) REFERENCES orders (o_orderkey),
  FOREIGN KEY (l_partkey, l_suppkey) REFERENCES partsupp (ps_partkey, ps_suppkey),
  FOREIGN KEY (l_partkey) REFERENCES part (p_partkey),
  FOREIGN KEY (l_suppkey) REFERENCES supplier (s_suppkey));
