"""The IR: spans, types, expressions, patterns, ADTs, modules, traversal, equality."""
from .attrs import AttrError, Attrs, DictAttrs, make_attrs
from .expr import (Call, Clause, Constant, Constructor, Expr, Function, GlobalVar, If, Let, Match,
                   Op, Pattern, PatternConstructor, PatternTuple, PatternVar, PatternWildcard,
                   RefCreate, RefRead, RefWrite, Tuple, TupleGetItem, Var, pattern_vars)
from .module import IRModule
from .node import ANY, AnyDim, MetaObject, Node
from .span import Span
from .traverse import ExprVisitor, post_order, pre_order, rewrite
from .types import (FuncType, GlobalTypeVar, IncompleteType, RefType, TensorType, TupleType, Type,
                    TypeCall, TypeData, TypeVar)
