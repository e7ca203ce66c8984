"""a2a_trio"""
