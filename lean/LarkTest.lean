import LarkTest.Conformance
