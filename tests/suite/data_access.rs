//! Data access: which code reads or writes which table, column or stored procedure, in the
//! stacks local-codebase-indexer users work in, and the impact of changing a table or column.

use crate::common;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;

/// (symbol, access) pairs of `data-access NAME`.
fn accessors(r: &TestRepo, name: &str) -> BTreeSet<(String, String)> {
    let v = r.json(&["--no-dense", "data-access", name]);
    v["results"]
        .as_array()
        .unwrap_or_else(|| panic!("{v}"))
        .iter()
        .map(|a| (a["symbol"].as_str().unwrap().to_string(), a["access"].as_str().unwrap().to_string()))
        .collect()
}

fn set(items: &[(&str, &str)]) -> BTreeSet<(String, String)> {
    items.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
}

#[test]
fn csharp_dapper_and_entity_framework() {
    let r = TestRepo::new();
    r.write(
        "Data/OrderRepository.cs",
        r#"using Dapper;
using System.Data;

public class OrderRepository
{
    private readonly IDbConnection _conn;

    public Order Get(int id)
    {
        return _conn.QuerySingle<Order>("SELECT Id, Total FROM Orders WHERE Id = @id", new { id });
    }

    public void Add(Order o)
    {
        _conn.Execute(@"INSERT INTO Orders (Id, Total) VALUES (@Id, @Total)", o);
    }

    public IEnumerable<Order> ForCustomer(int customerId)
    {
        return _conn.Query<Order>("usp_OrdersForCustomer", new { customerId }, commandType: CommandType.StoredProcedure);
    }
}
"#,
    );
    r.write(
        "Data/ShopContext.cs",
        r#"using Microsoft.EntityFrameworkCore;

[Table("customers")]
public class Customer
{
    public int Id { get; set; }
    public string Name { get; set; }
}

public class ShopContext : DbContext
{
    public DbSet<Customer> Customers { get; set; }
    public DbSet<Invoice> Invoices { get; set; }
}

public class CustomerService
{
    private readonly ShopContext _context;

    public Customer Find(int id)
    {
        return _context.Customers.Find(id);
    }

    public void Register(Customer c)
    {
        _context.Customers.Add(c);
        _context.SaveChanges();
    }

    public int CountInvoices()
    {
        return _context.Invoices.Count();
    }
}
"#,
    );
    r.commit_all("dotnet");
    assert_eq!(accessors(&r, "orders"), set(&[("OrderRepository.Get", "read"), ("OrderRepository.Add", "write")]));
    assert_eq!(accessors(&r, "usp_OrdersForCustomer"), set(&[("OrderRepository.ForCustomer", "call")]));
    assert_eq!(
        accessors(&r, "customers"),
        set(&[
            ("Customer", "map"),
            ("ShopContext", "map"),
            ("CustomerService.Find", "read"),
            ("CustomerService.Register", "write")
        ])
    );
    // EF's default table is the DbSet property's name.
    assert_eq!(accessors(&r, "Invoices"), set(&[("ShopContext", "map"), ("CustomerService.CountInvoices", "read")]));
    // A column: only the statements that name it.
    assert_eq!(
        accessors(&r, "orders.total"),
        set(&[("OrderRepository.Get", "read"), ("OrderRepository.Add", "write")])
    );
}

#[test]
fn python_sqlalchemy() {
    let r = TestRepo::new();
    r.write(
        "app/models.py",
        "from sqlalchemy.orm import DeclarativeBase\n\n\nclass Base(DeclarativeBase):\n    pass\n\n\nclass User(Base):\n    __tablename__ = \"users\"\n    id = Column(Integer, primary_key=True)\n\n\naudit = Table(\"audit_log\", metadata, Column(\"id\", Integer))\n",
    );
    r.write(
        "app/queries.py",
        "from sqlalchemy import select, delete\nfrom app.models import User\n\n\ndef active_users(session):\n    return session.scalars(select(User).where(User.active)).all()\n\n\ndef purge(session, uid):\n    session.execute(delete(User).where(User.id == uid))\n\n\ndef raw_count(conn):\n    return conn.execute(text(\"SELECT count(*) FROM users WHERE active = 1\")).scalar()\n\n\ndef helper():\n    return \"select a file from the list\"\n",
    );
    r.commit_all("py");
    assert_eq!(
        accessors(&r, "users"),
        set(&[("User", "map"), ("active_users", "read"), ("purge", "write"), ("raw_count", "read")])
    );
    assert_eq!(accessors(&r, "audit_log"), set(&[("", "map")]));
    let v = r.json(&["--no-dense", "data-access"]);
    let tables: BTreeSet<&str> = v["tables"].as_array().unwrap().iter().map(|t| t["table"].as_str().unwrap()).collect();
    assert_eq!(tables, BTreeSet::from(["audit_log", "users"]), "prose is not SQL: {v}");
}

#[test]
fn java_jpa_and_jdbc() {
    let r = TestRepo::new();
    r.write(
        "src/main/java/shop/Product.java",
        "package shop;\n\nimport jakarta.persistence.*;\n\n/** A product. */\n@Entity\n@Table(name = \"products\")\npublic class Product {\n    @Id\n    private Long id;\n}\n",
    );
    r.write(
        "src/main/java/shop/StockItem.java",
        "package shop;\n\n@Entity\npublic class StockItem {\n    private Long id;\n}\n",
    );
    r.write(
        "src/main/java/shop/ProductRepository.java",
        "package shop;\n\nimport org.springframework.data.jpa.repository.*;\n\npublic interface ProductRepository extends JpaRepository<Product, Long> {\n    @Query(\"SELECT p FROM Product p WHERE p.name LIKE :name\")\n    List<Product> search(String name);\n\n    void deleteByName(String name);\n}\n",
    );
    r.write(
        "src/main/java/shop/StockDao.java",
        "package shop;\n\nimport java.sql.*;\n\npublic class StockDao {\n    private Connection conn;\n\n    public int quantity(long id) throws SQLException {\n        try (PreparedStatement ps = conn.prepareStatement(\"SELECT qty FROM stock_item WHERE id = ?\")) {\n            ps.setLong(1, id);\n            return ps.executeQuery().getInt(1);\n        }\n    }\n\n    public void restock(long id) throws SQLException {\n        conn.prepareCall(\"{call restock_item(?)}\").execute();\n    }\n}\n",
    );
    r.commit_all("java");
    assert_eq!(
        accessors(&r, "products"),
        set(&[
            ("Product", "map"),
            ("ProductRepository", "repository"),
            ("ProductRepository.search", "read"),
            ("ProductRepository.deleteByName", "write")
        ])
    );
    // @Entity without @Table: Spring's default naming (snake case).
    assert_eq!(accessors(&r, "stock_item"), set(&[("StockItem", "map"), ("StockDao.quantity", "read")]));
    assert_eq!(accessors(&r, "restock_item"), set(&[("StockDao.restock", "call")]));
}

#[test]
fn go_database_sql_and_sql_files_with_procedures() {
    let r = TestRepo::new();
    r.write(
        "store/orders.go",
        "package store\n\nimport \"database/sql\"\n\ntype OrderStore struct{ db *sql.DB }\n\nfunc (s *OrderStore) Total(id int) (int, error) {\n\tvar t int\n\terr := s.db.QueryRow(`\n\t\tSELECT o.total\n\t\tFROM orders o\n\t\tJOIN customers c ON c.id = o.customer_id\n\t\tWHERE o.id = $1`, id).Scan(&t)\n\treturn t, err\n}\n\nfunc (s *OrderStore) Cancel(id int) error {\n\t_, err := s.db.Exec(\"UPDATE orders SET status = 'cancelled' WHERE id = $1\", id)\n\treturn err\n}\n\nfunc (s *OrderStore) Archive() error {\n\t_, err := s.db.Exec(\"CALL archive_orders()\")\n\treturn err\n}\n\nfunc Checkout(s *OrderStore, id int) error {\n\treturn s.Cancel(id)\n}\n",
    );
    r.write(
        "store/orders_test.go",
        "package store\n\nimport \"testing\"\n\nfunc TestCheckout(t *testing.T) {\n\t_ = Checkout(nil, 1)\n}\n",
    );
    r.write(
        "db/schema.sql",
        "CREATE TABLE orders (\n  id INTEGER PRIMARY KEY,\n  total INTEGER,\n  status TEXT\n);\n\nCREATE OR REPLACE PROCEDURE archive_orders()\nLANGUAGE sql\nAS $$\n  INSERT INTO orders_archive SELECT * FROM orders WHERE status = 'cancelled';\n  DELETE FROM orders WHERE status = 'cancelled';\n$$;\n",
    );
    r.commit_all("go");
    assert_eq!(
        accessors(&r, "orders"),
        set(&[
            ("OrderStore.Total", "read"),
            ("OrderStore.Cancel", "write"),
            ("", "ddl"),
            ("archive_orders", "read"),
            ("archive_orders", "write")
        ])
    );
    assert_eq!(accessors(&r, "customers"), set(&[("OrderStore.Total", "read")]));
    // A procedure: its callers, and what its body touches.
    let v = r.json(&["--no-dense", "data-access", "archive_orders"]);
    let callers: BTreeSet<&str> =
        v["results"].as_array().unwrap().iter().map(|a| a["symbol"].as_str().unwrap()).collect();
    assert_eq!(callers, BTreeSet::from(["OrderStore.Archive"]), "{v}");
    let touches: BTreeSet<(&str, &str)> = v["touches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (a["table"].as_str().unwrap(), a["access"].as_str().unwrap()))
        .collect();
    assert_eq!(touches, BTreeSet::from([("orders", "read"), ("orders", "write"), ("orders_archive", "write")]), "{v}");

    // Impact of a column: the definitions whose SQL names it, their callers and tests.
    let v = r.json(&["--no-dense", "impact", "--column", "orders.status"]);
    let touched: BTreeSet<&str> =
        v["touched_by"].as_array().unwrap().iter().map(|a| a["symbol"].as_str().unwrap()).collect();
    assert_eq!(touched, BTreeSet::from(["OrderStore.Cancel", "archive_orders"]), "{v}");
    let callers: BTreeSet<&str> =
        v["results"].as_array().unwrap().iter().map(|l| l["node"]["name"].as_str().unwrap()).collect();
    assert!(callers.contains("Checkout"), "{v}");
    let tests: Vec<&Value> = v["tests"].as_array().unwrap().iter().collect();
    assert!(tests.iter().any(|t| t["path"] == "store/orders_test.go"), "{v}");
    // And of a table: every definition touching it.
    let v = r.json(&["--no-dense", "impact", "--table", "orders"]);
    let touched: BTreeSet<&str> =
        v["touched_by"].as_array().unwrap().iter().map(|a| a["symbol"].as_str().unwrap()).collect();
    assert_eq!(touched, BTreeSet::from(["OrderStore.Total", "OrderStore.Cancel", "archive_orders"]), "{v}");
    // A misspelt table gets suggestions.
    let v = r.json(&["--no-dense", "data-access", "order"]);
    assert_eq!(v["matched"], false);
    assert!(v["suggestions"].as_array().unwrap().iter().any(|s| s == "orders"), "{v}");
}
